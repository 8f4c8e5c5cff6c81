// SPDX-License-Identifier: Apache-2.0
// test.mjs URL OUTDIR [DOCSDIR] - drives the vramfit page in the system's Chromium with
// playwright-core, as the guide's readers use it: at 1366x768 and 390x844, in English and in
// Italian (the browser's language picks it; the switch changes it), the answer first, the
// breakdown of the peak phase, the chart, the cards; the OOM doctor with the guide's own
// errors; the pickers and the doctor with the keyboard alone; no horizontal overflow; no
// request to any other host; every interface string in both languages. Screenshots go to
// OUTDIR (and DOCSDIR when given: `sh tests/browser/run.sh build/vramfit build/browser docs`).
// Prints one line per check, "ok ..." or "FAIL ...", and exits non-zero when a check failed.
import { chromium } from "playwright-core";
import { readFileSync, copyFileSync } from "node:fs";

const [url, out, docs] = process.argv.slice(2);
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
let failed = 0;
const check = (name, cond, detail) => {
  console.log((cond ? "ok   " : "FAIL ") + "browser " + name + (cond ? "" : ": " + detail));
  if (!cond) failed++;
};
const shot = async (page, name, opts) => {
  await page.screenshot({ path: out + "/" + name, ...opts });
  if (docs) copyFileSync(out + "/" + name, docs + "/" + name);
};
const fixture = (p) => readFileSync(new URL("../fixtures/" + p, import.meta.url), "utf8");
/* the guide's opening error (shared/reference/oom-guide-it.txt), as the fixture holds it */
const guide = fixture("oom/pytorch-wrapped.log").split("\n").filter((l) => !l.startsWith("# ")).join("\n");
/* no horizontal overflow: the document is no wider than the window */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
const widths = [[1366, 768], [390, 844]];
const langs = [["en", "en-GB", /^Fits on /], ["it", "it-IT", /^Ci sta su /]];
const foreign = [];

const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
const context = async (w, h, locale) => {
  const c = await browser.newContext({ viewport: { width: w, height: h }, locale, deviceScaleFactor: 1 });
  c.on("request", (r) => { if (!r.url().startsWith(url) && !r.url().startsWith("data:")) foreign.push(r.url()); });
  return c;
};
const answered = (page) => page.waitForFunction(() => {
  const a = document.querySelector("#answer");
  return a && a.textContent && !document.querySelector("#result").hidden;
}, null, { timeout: 15000 });
const charted = (page) => page.waitForSelector("#chart svg", { timeout: 20000 });

try {
  /* ---------------------------------------------- each width, each language */
  for (const [w, h] of widths) {
    for (const [lang, locale, fits] of langs) {
      const ctx = await context(w, h, locale);
      const page = await ctx.newPage();
      const t0 = Date.now();
      await page.goto(url + "?model=llama-3.1-8b&ctx=32k&users=4&hours=3#selector");
      await answered(page);
      const at = w + "x" + h + " " + lang;
      check(at + ": the page answers in " + (Date.now() - t0) + " ms", true);
      check(at + ": the language follows the browser (" + locale + ")",
            (await page.getAttribute("html", "lang")) === lang, await page.getAttribute("html", "lang"));
      const ans = await page.textContent("#answer");
      check(at + ": the answer first, one sentence: " + ans, fits.test(ans) && /\/h$/.test(ans) && /GB/.test(ans), ans);
      const detail = await page.textContent("#answer-detail");
      check(at + ": GB and GiB both: " + detail, /\d+ GB/.test(detail) && /GiB/.test(detail), detail);
      await charted(page);
      check(at + ": no horizontal overflow after a query", (await overflow(page)) <= 0, await overflow(page) + " px");
      await page.locator("#answer").scrollIntoViewIfNeeded();
      await page.evaluate(() => document.querySelector("#status").scrollIntoView());
      await shot(page, "page-" + w + "-" + lang + ".png");
      /* the doctor with the guide's error */
      await page.fill("#log", guide);
      await page.click("#explain");
      await page.waitForSelector("#diagnosis .fixlist", { timeout: 15000 });
      const d = await page.textContent("#diagnosis");
      const asked = lang === "en" ? /asked for 2\.00 GiB more when 1\.12 GiB was free/ : /chiesto altri 2,00 GiB quando ne restavano liberi 1,12 GiB/;
      check(at + ": the doctor says it in plain words", asked.test(d), d.slice(0, 200));
      check(at + ": a 24 GB card, 23.65 GiB usable", (lang === "en" ? /a 24 GB card \(23\.65 GiB usable\)/ : /una scheda da 24 GB \(23,65 GiB utilizzabili\)/).test(d), d.slice(0, 300));
      check(at + ": no horizontal overflow after an explanation", (await overflow(page)) <= 0, await overflow(page) + " px");
      if (w < 500 && lang === "it") {
        await page.evaluate(() => document.querySelector("#doctor").scrollIntoView());
        await page.evaluate(() => window.scrollBy(0, document.querySelector("#diagnosis").getBoundingClientRect().top - 40));
        await shot(page, "doctor-" + w + "-" + lang + ".png");
      }
      await ctx.close();
    }
  }

  /* the narrowest phone the page is for, with the widest table (vLLM notes, the job's price) */
  for (const locale of ["it-IT", "en-GB"]) {
    const c = await context(360, 740, locale);
    const p = await c.newPage();
    await p.goto(url + "?model=llama-3.1-8b&engine=vllm&ctx=32k&users=4&hours=2#selector");
    await answered(p);
    await charted(p);
    check("360 px " + locale + ": no horizontal overflow with vLLM and a job length", (await overflow(p)) <= 0, await overflow(p) + " px");
    await c.close();
  }

  /* ---------------------------------------------- the selector's numbers, in English */
  const ctx = await context(1366, 768, "en-GB");
  const page = await ctx.newPage();
  await page.goto(url + "?model=llama-3.1-8b&ctx=32k&users=4&hours=3#selector");
  await answered(page);
  const first = await page.textContent("#cards tbody tr:first-child");
  check("the cheapest offer is marked", /cheapest/.test(first), first);
  const api = await (await page.request.get(url + "api/v1/pick?model=llama-3.1-8b&ctx=32k&users=4")).json();
  const cheapest = api.offers.find((o) => o.fits && o.currency === api.currency);
  check("it is the API's cheapest (" + cheapest.name + ")", first.includes(cheapest.name), first);
  check("the answer names it too", (await page.textContent("#answer")).includes(cheapest.name), await page.textContent("#answer"));
  const rows = await page.locator("#cards tbody tr").count();
  check("cards table has " + rows + " rows", rows >= 3, rows);
  const parts = await page.locator("#breakdown .bar").first().locator("span").count();
  check("breakdown bar has " + parts + " parts", parts >= 3, parts);
  check("state is in the URL", page.url().includes("model=llama-3.1-8b") && page.url().includes("ctx=32k"), page.url());
  const lines = await page.locator("#chart svg line.card").count();
  const dots = await page.locator("#chart svg circle").count();
  check("the chart has " + dots + " points and " + lines + " card lines", dots >= 4 && lines >= 2, dots + "/" + lines);
  if (api.offers.some((o) => o.derived)) {
    check("a derived multi-card price says so", (await page.textContent("#cards")).includes("× single-card price"),
          await page.textContent("#cards"));
  } else {
    console.log("note browser: the API marks no offer derived (issue 28): the derived note is not checked");
  }
  /* issue 23: every LLM offer of /api/v1/pick carries its speed (F-SPD-01..03) and its price
   * per 1M output tokens (F-SPD-06), not only under rank=cost; the page's time-and-cost column
   * shows the cheapest offer's two figures as the API gives them */
  const sp = cheapest.speed || {}, co = cheapest.cost || {};
  check("the API's cheapest offer carries tokens/s and EUR per 1M output tokens",
        sp.decode_tokens_per_s > 0 && sp.output_tokens_per_s > 0 && co.per_result > 0 &&
        co.unit === "1M output tokens" && co.currency === api.currency, JSON.stringify({ sp, co }));
  check("the time-and-cost column shows", await page.isVisible("#cards th.speed"), "hidden");
  const cell = await page.textContent("#cards tbody tr:first-child td.speed");
  const tps = new Intl.NumberFormat("en-GB", { maximumFractionDigits: 0 }).format(sp.decode_tokens_per_s);
  const per = new Intl.NumberFormat("en-GB", { minimumFractionDigits: co.per_result < 0.1 ? 4 : 2,
                                               maximumFractionDigits: co.per_result < 0.1 ? 4 : 2 }).format(co.per_result);
  check("the cheapest row shows " + tps + " tokens/s and " + per + " per 1M output tokens",
        cell.includes(tps + " tokens/s") && cell.includes(per) && cell.includes("/ 1M output tokens"), cell);

  /* the language switch, and back */
  await page.click(".lang button[data-lang=it]");
  check("the switch turns the page Italian", /^Ci sta su /.test(await page.textContent("#answer")) &&
        (await page.textContent("#sel-h")) === "Selettore VRAM", await page.textContent("#answer"));
  check("numbers follow the language (comma decimals)", /\d,\d\d GiB/.test(await page.textContent("#answer-detail")),
        await page.textContent("#answer-detail"));
  await page.click(".lang button[data-lang=en]");
  check("and back to English", /^Fits on /.test(await page.textContent("#answer")), await page.textContent("#answer"));

  /* every interface string in both languages */
  const missing = await page.evaluate(async () => {
    const en = Object.keys(I18N.en), it = Object.keys(I18N.it);
    const bad = en.filter((k) => !it.includes(k)).map((k) => "it lacks " + k)
      .concat(it.filter((k) => !en.includes(k)).map((k) => "en lacks " + k))
      .concat(en.filter((k) => !I18N.en[k] || !I18N.it[k]).map((k) => "empty " + k));
    const used = [...document.querySelectorAll("[data-i18n]")].map((e) => e.dataset.i18n)
      .concat([...document.querySelectorAll("[data-i18n-aria]")].map((e) => e.dataset.i18nAria));
    const src = await (await fetch("/app.js")).text();
    /* t("key") literals; t("prefix." + name) needs some key under the prefix */
    for (const m of src.matchAll(/\bt\(\s*"([^"]+)"/g)) used.push(m[1]);
    for (const p of new Set(used.filter((k) => k.endsWith(".")))) {
      if (!en.some((k) => k.startsWith(p)) || !it.some((k) => k.startsWith(p))) bad.push("no key under " + p);
      used.splice(0, used.length, ...used.filter((k) => k !== p));
    }
    for (const m of src.matchAll(/\?\s*"([a-z]+\.[a-z.]+)"\s*:\s*"([a-z]+\.[a-z.]+)"/g)) used.push(m[1], m[2]);
    for (const k of new Set(used)) if (!(k in I18N.en) || !(k in I18N.it)) bad.push("used but missing " + k);
    return { bad, n: en.length, used: new Set(used).size };
  });
  check("every interface string exists in both languages (" + missing.n + " strings, " + missing.used + " used)",
        missing.bad.length === 0, missing.bad.join(", "));

  /* vLLM takes its utilization budget by design: no row is "tight"; headroom as KV tokens */
  await page.goto(url + "?model=llama-3.1-8b&engine=vllm&ctx=32k&users=4#selector");
  await answered(page);
  const tight = await page.locator("#cards .tight").count();
  check("no vLLM row is marked tight (" + tight + ")", tight === 0, tight);
  const vl = await page.textContent("#vllm");
  check("vLLM headroom as KV tokens and concurrency", /tokens/.test(vl) && /requests of 32,768 tokens at once/.test(vl), vl);
  check("the vLLM answer gives its KV tokens", /KV cache holds [\d,]+ tokens/.test(await page.textContent("#answer")),
        await page.textContent("#answer"));

  /* the user's card: short, the fix that makes it fit, the bigger card */
  await page.goto(url + "?model=llama-3.1-8b&ctx=128k&users=2&gpu=rtx-4090#selector");
  await answered(page);
  const own = await page.textContent("#answer");
  check("on the user's card: " + own, /^Does not fit on RTX 4090 24 GB: short by/.test(own), own);
  const nx = await page.textContent("#next");
  check("then the fix and the bigger card", /To make it fit this card/.test(nx) && /--ctx \d+/.test(nx) && /Or a bigger card/.test(nx), nx);
  await charted(page);
  check("the chart marks the user's context", (await page.locator("#chart circle.you").count()) === 1, "no mark");

  /* task switch */
  await page.selectOption("#task", "train");
  check("fine-tune shows the method", await page.isVisible("#method"), "hidden");
  check("fine-tune hides users", !(await page.isVisible("#users")), "visible");
  await page.selectOption("#task", "infer");
  await page.fill("#model", "no-such-model");
  await page.click("#find");
  await page.waitForSelector("#status.error", { timeout: 10000 });
  check("an unknown model says so", /unknown model/.test(await page.textContent("#status")), await page.textContent("#status"));

  /* ---------------------------------------------- the keyboard alone */
  const tabTo = async (p, sel, max) => {
    for (let i = 0; i < (max || 60); i++) {
      if (await p.evaluate((s) => document.activeElement && document.activeElement.matches(s), sel)) return true;
      await p.keyboard.press("Tab");
    }
    return false;
  };
  const kb = await ctx.newPage();
  await kb.goto(url);
  await kb.waitForFunction(() => document.querySelector("#model"));
  check("keyboard: Tab reaches the model picker", await tabTo(kb, "#model"), "never focused");
  await kb.keyboard.press("Control+A");
  await kb.keyboard.type("flux1-d");
  await kb.waitForSelector("#model-list:not([hidden]) [role=option]");
  await kb.keyboard.press("ArrowDown");
  check("keyboard: an arrow marks the first suggestion",
        (await kb.getAttribute("#model", "aria-activedescendant")) === "model-list-0", await kb.getAttribute("#model", "aria-activedescendant"));
  await kb.keyboard.press("Enter");
  check("keyboard: Enter takes it", (await kb.inputValue("#model")) === "flux1-dev", await kb.inputValue("#model"));
  await kb.waitForFunction(() => document.querySelector("#task").value === "image", null, { timeout: 10000 });
  check("the task follows the model (image)", true);
  check("the engine list follows the task", await kb.evaluate(() => [...document.querySelector("#engine").options]
        .filter((o) => !o.disabled).map((o) => o.value || o.textContent).join(",").includes("comfyui") &&
        document.querySelector("#engine option:not([value=''])").disabled), "LLM engines offered for an image model");
  await kb.keyboard.press("Enter");
  await answered(kb);
  check("keyboard: Enter asks; the answer: " + (await kb.textContent("#answer")), /^Fits on /.test(await kb.textContent("#answer")),
        await kb.textContent("#answer"));
  /* issue 24: euros and time per image by card (pick --rank cost), the 4090 with its offload */
  await kb.waitForSelector("#costchart .costrow", { timeout: 10000 }).catch(() => null);
  const cc = (await kb.textContent("#costchart")) || "";
  check("euros and time per image by card: " + cc.slice(0, 100),
        (await kb.locator("#costchart .costrow").count()) >= 2 && /\/ image/.test(cc) && /with --offload lowvram/.test(cc),
        cc.slice(0, 300));
  const peak = await kb.textContent("#breakdown > p");
  const peakLegend = await kb.textContent("#breakdown > .legend");
  check("the bar is the peak phase's (" + peak + ")", /denoising/.test(peak) && !/text encoders/.test(peakLegend), peak + " / " + peakLegend);
  check("keyboard: Tab reaches the other phases' toggle", await tabTo(kb, "#breakdown details.phases summary"), "never focused");
  await kb.keyboard.press("Enter");
  check("keyboard: Enter opens the other phases", await kb.evaluate(() => document.querySelector("#breakdown details.phases").open) &&
        /text encoders/.test(await kb.textContent("#breakdown details.phases")), "closed");
  const ollama = await ctx.newPage();
  await ollama.goto(url + "?model=qwen3:32b&ctx=8k#selector");
  await answered(ollama);
  check("an Ollama tag is read: " + (await ollama.textContent("#status")),
        /Qwen3 32B · ollama · Q4_K_M/.test(await ollama.textContent("#status")), await ollama.textContent("#status"));

  /* the OOM doctor */
  check("keyboard: Tab reaches the doctor's log", await tabTo(kb, "#log", 120), "never focused");
  await kb.keyboard.insertText(guide);
  await kb.keyboard.press("Tab");
  check("keyboard: then the tool", await kb.evaluate(() => document.activeElement.id === "oom-tool"), "elsewhere");
  await kb.keyboard.press("Tab");
  await kb.keyboard.press("Tab");
  check("keyboard: the task, then the card", await kb.evaluate(() => document.activeElement.id === "oom-gpu"), "elsewhere");
  await kb.keyboard.press("Tab");
  await kb.keyboard.type("flux1-dev");
  await kb.waitForSelector("#oom-model-list:not([hidden])");
  await kb.keyboard.press("ArrowDown");
  await kb.keyboard.press("Enter");
  await kb.waitForFunction(() => document.querySelector("#oom-task").value === "image", null, { timeout: 10000 });
  check("the doctor's task follows the model (image)", true);
  await kb.keyboard.press("Enter");
  await kb.waitForSelector("#diagnosis .fixlist, #diagnosis .error", { timeout: 15000 });
  const fl = await kb.textContent("#diagnosis");
  check("keyboard: the doctor explains, in plain words first",
        /^The job needs more memory than the card holds/.test(await kb.textContent("#diagnosis p")), fl.slice(0, 200));
  check("the formula trail is behind the why toggle",
        !(await kb.isVisible("#diagnosis details.why li")) && /F-OOM-/.test(await kb.textContent("#diagnosis details.why")),
        "visible or empty");
  check("keyboard: Tab and Enter open it", (await tabTo(kb, "#diagnosis details.why summary")) &&
        (await kb.keyboard.press("Enter"), await kb.isVisible("#diagnosis details.why li")), "closed");
  const titles = await kb.locator("#diagnosis .fixlist > li > strong").allTextContents();
  /* the guide's ComfyUI/Flux ladder (fp8/GGUF weights, tiled VAE decode, ...), never HF Trainer's */
  check("the guide's Flux error with flux1-dev gets the image ladder: " + titles.slice(0, 4).join("; "),
        titles.some((s) => /fp8/i.test(s)) && titles.some((s) => /VAE Decode \(Tiled\)|tiled/i.test(s)) &&
        !/per_device_train_batch_size|gradient checkpointing/i.test(fl), titles.join("; "));
  check("the fixes have copy buttons", (await kb.locator("#diagnosis button.copy").count()) > 2, "no buttons");

  /* the card field: sent as explain's gpu option (issue 19 adds it to the option table) */
  const withGpu = await page.request.post(url + "api/v1/explain?gpu=rtx-4090", { data: guide, headers: { "Content-Type": "text/plain" } });
  if (withGpu.ok()) {
    await kb.fill("#oom-gpu", "rtx-4090");
    await kb.click("#explain");
    await kb.waitForSelector("#diagnosis .fixlist", { timeout: 15000 });
    check("with the card given, the bigger card is another one",
          !/cheapest card with room: RTX 4090/.test(await kb.textContent("#diagnosis")), await kb.textContent("#diagnosis"));
  } else {
    console.log("note browser: explain takes no gpu option yet (issue 19): the card field is not checked");
  }

  /* issue 18: the guide's error wrapped, on one line, its first line alone; symptoms */
  const pastes = [["wrapped", guide], ["on one line", guide.replace(/\n(?=.)/g, " ")], ["first line only", guide.split("\n")[0]]];
  for (const [how, text] of pastes) {
    await page.fill("#oom-model", "");
    await page.selectOption("#oom-task", "");
    await page.fill("#log", text);
    await page.click("#explain");
    await page.waitForSelector("#diagnosis .fixlist", { timeout: 15000 });
    const tx = await page.textContent("#diagnosis");
    check("the guide's error " + how + " is found, 2.00 GiB asked", /asked for 2\.00 GiB/.test(tx), tx.slice(0, 200));
  }
  const pt = fixture("oom/pytorch-2.2.log");
  await page.fill("#log", pt);
  await page.fill("#oom-model", "llama-3.1-8b");
  await page.click("#explain");
  await page.waitForSelector("#diagnosis .fixlist", { timeout: 15000 });
  const tr = await page.textContent("#diagnosis");
  await page.evaluate(() => document.querySelector("#diagnosis").scrollIntoView());
  await shot(page, "doctor-1366-en.png");
  check("a training OOM with its model: fixes say what they save and cost",
        /saves ~[\d.]+ (GiB|MiB)/.test(tr) && /(quality|slower)/.test(tr), tr.slice(0, 300));
  const symptomsSeen = [["nvidia-smi-container.log", /nvidia-smi: memory in use[\s\S]*vramfit smi/],
                        ["ollama-ps-split.log", /split between CPU and GPU[\s\S]*at most [\d.]+ tokens\/s/]];
  for (const [file, want] of symptomsSeen) {
    await page.fill("#log", fixture("symptoms/" + file));
    await page.click("#explain");
    await page.waitForSelector("#diagnosis h3.symptom", { timeout: 15000 });
    const tx = await page.textContent("#diagnosis");
    check("the doctor explains " + file + " as a symptom, no error", want.test(tx) && /No out-of-memory error found/.test(tx), tx.slice(0, 200));
  }
  check("no request to any other host (" + foreign.length + ")", foreign.length === 0, foreign.slice(0, 3).join(" "));
} catch (e) {
  check("run", false, e.message);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
