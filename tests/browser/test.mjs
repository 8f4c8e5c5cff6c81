// test.mjs URL OUTDIR - drives the vramfit page in the system's Chromium with playwright-core:
// the selector (model in the URL -> breakdown bar and the cards table with the cheapest offer
// marked), the task switch, and the OOM doctor (paste a PyTorch OOM -> cause and fixes with
// copy buttons). Saves OUTDIR/selector.png and OUTDIR/doctor.png. Prints one line per check,
// "ok ..." or "FAIL ...", and exits non-zero when a check failed.
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";

const [url, out] = process.argv.slice(2);
const exe = process.env.CHROMIUM || "/usr/bin/chromium";
let failed = 0;
const check = (name, cond, detail) => {
  console.log((cond ? "ok   " : "FAIL ") + "browser " + name + (cond ? "" : ": " + detail));
  if (!cond) failed++;
};

const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 1300 } });
  const t0 = Date.now();
  await page.goto(url + "?model=llama-3.1-8b&ctx=32k&users=4&hours=3#selector");
  await page.waitForSelector("#cards tbody tr", { timeout: 15000 });
  check("the selector loads in " + (Date.now() - t0) + " ms", true);
  const first = await page.textContent("#cards tbody tr:first-child");
  check("the cheapest offer is marked", /cheapest/.test(first), first);
  const api = await (await page.request.get(url + "api/v1/pick?model=llama-3.1-8b&ctx=32k&users=4")).json();
  const cheapest = api.offers.find((o) => o.fits && o.currency === api.currency);
  check("it is the API's cheapest (" + cheapest.name + ")", first.includes(cheapest.name), first);
  const rows = await page.locator("#cards tbody tr").count();
  check("cards table has " + rows + " rows", rows >= 3, rows);
  const bar = await page.locator("#breakdown .bar span").count();
  check("breakdown bar has " + bar + " parts", bar >= 3, bar);
  check("state is in the URL", page.url().includes("model=llama-3.1-8b") && page.url().includes("ctx=32k"), page.url());
  await page.screenshot({ path: out + "/selector.png", fullPage: false });

  await page.selectOption("#task", "train");
  check("fine-tune shows the method", await page.isVisible("#method"), "hidden");
  check("fine-tune hides users", !(await page.isVisible("#users")), "visible");
  await page.selectOption("#task", "infer");

  await page.fill("#model", "no-such-model");
  await page.click("#form button[type=submit]");
  await page.waitForSelector("#status.error", { timeout: 10000 });
  check("an unknown model says so", /unknown model/.test(await page.textContent("#status")), await page.textContent("#status"));

  const log = readFileSync(new URL("../fixtures/oom/pytorch-2.2.log", import.meta.url), "utf8");
  await page.fill("#log", log);
  await page.fill("#oom-model", "llama-3.1-8b");
  await page.click("#oomform button[type=submit]");
  await page.waitForSelector("#diagnosis h3", { timeout: 15000 });
  const diag = await page.textContent("#diagnosis");
  check("the doctor names the cause", /Cause: workload too large/.test(diag), diag.slice(0, 200));
  check("the fixes have copy buttons", (await page.locator("#diagnosis button.copy").count()) > 2, "no buttons");
  await page.locator("#doctor").screenshot({ path: out + "/doctor.png" });

  /* issue 18: the guide's opening error as printed (wrapped), on one line, its first line
   * alone; symptoms that are not errors (nvidia-smi in a container, ollama ps) */
  const guide = readFileSync(new URL("../fixtures/oom/pytorch-wrapped.log", import.meta.url), "utf8")
    .split("\n").filter((l) => !l.startsWith("# ")).join("\n");
  const pastes = [["wrapped", guide], ["on one line", guide.replace(/\n(?=.)/g, " ")],
                  ["first line only", guide.split("\n")[0]]];
  for (const [how, text] of pastes) {
    await page.fill("#oom-model", "");
    await page.fill("#log", text);
    await page.click("#oomform button[type=submit]");
    await page.waitForFunction(() => !/Reading the log/.test(document.querySelector("#diagnosis").textContent),
                               null, { timeout: 15000 });
    const t = await page.textContent("#diagnosis");
    check("the guide's error " + how + " is found, 2.00 GiB asked", /Cause: /.test(t) && /Failed request 2\.00 GiB/.test(t), t.slice(0, 200));
  }
  const symptomsSeen = [["nvidia-smi-container.log", /nvidia-smi: memory in use[\s\S]*vramfit smi/],
                        ["ollama-ps-split.log", /split between CPU and GPU[\s\S]*several times slower/]];
  for (const [file, want] of symptomsSeen) {
    await page.fill("#log", readFileSync(new URL("../fixtures/symptoms/" + file, import.meta.url), "utf8"));
    await page.click("#oomform button[type=submit]");
    await page.waitForSelector("#diagnosis h3.symptom", { timeout: 15000 });
    const t = await page.textContent("#diagnosis");
    check("the doctor explains " + file + " as a symptom, no error", want.test(t) && /No out-of-memory error found/.test(t), t.slice(0, 200));
  }
} catch (e) {
  check("run", false, e.message);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
