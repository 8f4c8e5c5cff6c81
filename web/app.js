// SPDX-License-Identifier: Apache-2.0
// vramfit's web page: the VRAM selector and the OOM doctor, on the JSON API of `vramfit serve`
// (/api/v1/estimate, /pick, /explain, /models, /gpus). Plain JS, no framework, no request to
// any other host. The selector's state lives in the query string so a URL can be shared; the
// language (Italian or English, web/i18n.js) comes from ?lang=, then the last choice, then the
// browser's language. Every result is kept and drawn again when the language changes.
"use strict";

const $ = (sel) => document.querySelector(sel);
const COLORS = ["#0b5fff", "#ff8c00", "#0a7a2f", "#b00020", "#7a3cff", "#008b8b", "#c71585", "#6b6b00", "#444"];
const FIELDS = ["model", "task", "engine", "gpu", "ctx", "users", "weights", "kv-dtype", "method", "batch",
                "grad-checkpointing", "res", "frames", "hours"];
const TASKS = ["infer", "train", "image", "video"];
// Ollama's library tags without a quantization ("qwen3:32b") are its Q4_K_M builds
// (ollama.com/library/<name>/tags lists "32b" as the same digest as "32b-q4_K_M").
const OLLAMA_DEFAULT_QUANT = "Q4_K_M";

let LANG = "en";
let MODELS = [];   /* /api/v1/models */
let GPUS = [];     /* /api/v1/gpus */
let SEL = null;    /* the selector's last answer, drawn again on a language change */
let DOC = null;    /* the doctor's last answer */
let CHART = null;  /* the chart's last points */

/* ------------------------------------------------------------------ language and numbers */

function t(key, vars) {
  const s = (I18N[LANG] && I18N[LANG][key]) || I18N.en[key] || key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (vars && vars[k] != null ? vars[k] : m));
}

function locale() { return LANG === "it" ? "it-IT" : "en-GB"; }

function num(v, digits) {
  if (v == null || !isFinite(v)) return "?";
  return new Intl.NumberFormat(locale(), { minimumFractionDigits: digits || 0,
                                           maximumFractionDigits: digits || 0 }).format(v);
}

/* bytes in binary units, as PyTorch and the CLI print them */
function gib(b) {
  if (b == null) return "?";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return num(b, i ? 2 : 0) + " " + u[i];
}

/* bytes in decimal GB, as cards are sold */
function gb(b) { return b == null ? "?" : num(b / 1e9, 1) + " GB"; }

function money(v, cur, digits) {
  if (v == null) return "-";
  const d = digits != null ? digits : v < 0.1 ? 4 : 2;
  try {
    return new Intl.NumberFormat(locale(), { style: "currency", currency: cur || "EUR",
                                             minimumFractionDigits: d, maximumFractionDigits: d }).format(v);
  } catch (e) { return (cur || "") + " " + num(v, d); }
}

function tokens(n) { return n >= 1024 && n % 1024 === 0 ? n / 1024 + "k" : num(n); }

function pickLang() {
  const q = new URLSearchParams(location.search).get("lang");
  let saved = null;
  try { saved = localStorage.getItem("vramfit.lang"); } catch (e) { /* private mode */ }
  const nav = (navigator.languages && navigator.languages[0]) || navigator.language || "en";
  const want = q || saved || nav;
  return /^it\b/i.test(want) ? "it" : "en";
}

function applyLang(lang) {
  LANG = lang;
  document.documentElement.lang = lang;
  for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll("[data-i18n-aria]")) e.setAttribute("aria-label", t(e.dataset.i18nAria));
  for (const b of document.querySelectorAll(".lang button")) b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
  document.title = t("title");
  if (SEL) renderSelection(SEL);
  if (CHART) drawChart(CHART);
  if (SEL) costChart(SEL);
  if (DOC) renderDoctor(DOC);
}

function setLang(lang) {
  try { localStorage.setItem("vramfit.lang", lang); } catch (e) { /* private mode */ }
  const u = new URL(location.href);
  u.searchParams.set("lang", lang);
  history.replaceState(null, "", u);
  applyLang(lang);
}

/* ------------------------------------------------------------------ helpers */

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

async function api(path, q, init) {
  const r = await fetch(path + (q && String(q) ? "?" + q : ""), init);
  const body = await r.json().catch(() => null);
  if (!r.ok || !body) throw new Error(body && body.error ? body.error.message : t("err.http", { status: r.status }));
  return body;
}

function gpuSpec(id) { return GPUS.find((g) => g.id === id) || null; }

/* the catalog cards whose usable memory is this total (a log's "total capacity") */
function gpusByUsable(bytes) {
  return GPUS.filter((g) => g.usable_bytes && Math.abs(g.usable_bytes - bytes) / g.usable_bytes < 0.003);
}

/* a card's price per hour for n of it, in cur: its own offer, else n x the single-card one */
function cardPrice(spec, n, cur) {
  if (!spec) return null;
  const offers = (spec.offers || []).filter((o) => o.currency === cur && o.price_per_hour != null);
  const own = offers.find((o) => o.count === n);
  if (own) return own.price_per_hour;
  const one = offers.find((o) => o.count === 1);
  return one ? one.price_per_hour * n : null;
}

function cardName(spec, id, n) { return (n > 1 ? n + " × " : "") + (spec ? spec.name : id); }

/* a card as the subject of a sentence: Italian puts an article before one card ("una RTX 5090") */
function subject(name, n) { return LANG === "it" && n === 1 ? "una " + name : name; }

function copyButton(text) {
  const b = el("button", { type: "button", class: "copy", "aria-label": t("copy.aria", { cmd: text }) }, t("copy"));
  b.addEventListener("click", () => {
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => { b.textContent = t("copied"); }, () => {});
  });
  return b;
}

/* ------------------------------------------------------------------ model and card pickers */

function modelKind(m) { return /^pipelines\//.test(m.file || "") ? t("combo.diffusion") : t("combo.llm"); }

/* an Ollama tag ("qwen3:32b", "llama3.1:70b-instruct-q4_K_M") as a catalog model and a quant */
function ollamaTag(text) {
  const m = /^([a-z][\w.-]*):([\w.-]+)$/i.exec(text.trim());
  if (!m || /^hf$/i.test(m[1])) return null;
  const parts = m[2].split("-");
  const size = parts.find((p) => /^\d+(\.\d+)?[bm]$/i.test(p)) || "";
  const qp = parts.find((p) => /^(q\d\w*|iq\d\w*|fp16|f16|bf16|fp32|f32)$/i.test(p));
  const quant = qp ? (/^i?q/i.test(qp) ? qp.toUpperCase() : qp.toLowerCase().replace(/^f(16|32)$/, "fp$1"))
                   : OLLAMA_DEFAULT_QUANT;
  const name = m[1].toLowerCase();
  const dashed = name.replace(/([a-z])(\d)/g, "$1-$2");
  const want = [name, dashed].map((n) => (size ? n + "-" + size.toLowerCase() : n));
  const hit = MODELS.find((x) => x.alias && want.includes(x.alias.toLowerCase())) ||
              MODELS.find((x) => x.alias && want.some((w) => x.alias.toLowerCase().startsWith(w + "-")));
  return { tag: text.trim(), model: hit || null, quant };
}

function modelOptions(text) {
  const s = text.trim().toLowerCase();
  const out = [];
  const tag = ollamaTag(text);
  if (tag) out.push({ value: tag.tag, label: tag.tag,
                      hint: t("combo.ollama") + (tag.model ? " → " + tag.model.name + ", " + tag.quant : "") });
  if (/^hf:/i.test(s)) out.push({ value: text.trim(), label: text.trim(), hint: t("combo.hf") });
  const hits = MODELS.filter((m) => !s || [m.alias, m.id, m.name].some((f) => f && f.toLowerCase().includes(s)));
  hits.sort((a, b) => Number(!(a.alias || "").startsWith(s)) - Number(!(b.alias || "").startsWith(s)));
  for (const m of hits.slice(0, 8)) out.push({ value: m.alias || m.id, label: m.name, hint: (m.alias || m.id) + " · " + modelKind(m) });
  return out;
}

function gpuOptions(text) {
  const s = text.trim().toLowerCase();
  return GPUS.filter((g) => !s || g.id.includes(s) || g.name.toLowerCase().includes(s)).slice(0, 8)
    .map((g) => ({ value: g.id, label: g.name, hint: t("tbl.usable", { gib: gib(g.usable_bytes) }) }));
}

/* A combobox (ARIA 1.2 pattern): suggestions under the input, arrows to move, Enter to take
 * one, Escape to close; typing anything else is kept as typed. */
function combo(input, source) {
  const list = document.getElementById(input.getAttribute("aria-controls"));
  let items = [];
  let active = -1;
  const close = () => { list.hidden = true; input.setAttribute("aria-expanded", "false"); input.removeAttribute("aria-activedescendant"); active = -1; };
  const mark = () => {
    [...list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === active)));
    if (active >= 0) { input.setAttribute("aria-activedescendant", list.children[active].id); list.children[active].scrollIntoView({ block: "nearest" }); }
  };
  const choose = (i) => {
    input.value = items[i].value;
    close();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const open = () => {
    items = source(input.value);
    list.replaceChildren();
    items.forEach((it, i) => {
      const li = el("li", { role: "option", id: list.id + "-" + i, "aria-selected": "false" },
                    el("span", {}, it.label), " ", el("small", {}, it.hint));
      li.addEventListener("mousedown", (e) => { e.preventDefault(); choose(i); });
      list.append(li);
    });
    active = -1;
    list.hidden = items.length === 0;
    input.setAttribute("aria-expanded", String(items.length > 0));
  };
  input.addEventListener("input", open);
  input.addEventListener("blur", close);
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (list.hidden) open();
      if (!items.length) return;
      active = e.key === "ArrowDown" ? (active + 1) % items.length : (active <= 0 ? items.length : active) - 1;
      mark();
    } else if (e.key === "Enter" && !list.hidden && active >= 0) {
      e.preventDefault();
      choose(active);
    } else if (e.key === "Escape" && !list.hidden) {
      e.preventDefault();
      close();
    }
  });
}

/* task and engine follow the model: the model's own task (as the estimator defaults it) */
async function followModel(value, taskSel, engineSel) {
  const v = value.trim();
  if (!v) return;
  const tag = ollamaTag(v);
  if (tag) {
    taskSel.value = "infer";
    if (engineSel) engineSel.value = "ollama";
  } else if (!/^hf:/i.test(v)) {
    try {
      const est = await api("/api/v1/estimate", new URLSearchParams({ model: v }));
      if (TASKS.includes(est.task)) taskSel.value = est.task;
    } catch (e) { return; /* an unknown name: the answer says so */ }
  }
  if (engineSel) {
    const opt = engineSel.selectedOptions[0];
    if (opt && opt.value && !opt.classList.contains("t-" + taskSel.value)) engineSel.value = "";
  }
  showRows();
}

/* ------------------------------------------------------------------ the selector */

function showRows() {
  const task = $("#task").value;
  for (const f of document.querySelectorAll("#form .field")) {
    const cls = [...f.classList].filter((c) => TASKS.includes(c));
    f.classList.toggle("hidden", cls.length > 0 && !cls.includes(task));
  }
  for (const o of $("#engine").options) {
    const tcls = [...o.classList].filter((c) => c.startsWith("t-"));
    const off = tcls.length > 0 && !tcls.includes("t-" + task);
    o.hidden = off;
    o.disabled = off;
  }
}

/* the form's state: visible, non-empty fields only */
function params() {
  const q = new URLSearchParams();
  for (const f of FIELDS) {
    const e = document.getElementById(f);
    if (!e || !e.value.trim() || (e.closest(".field") && e.closest(".field").classList.contains("hidden"))) continue;
    q.set(f, e.value.trim());
  }
  if (q.get("task") === "infer") q.delete("task");
  return q;
}

/* the query the API takes: an Ollama tag becomes its catalog model, quant and engine */
function apiQuery(q) {
  const a = new URLSearchParams(q);
  a.delete("lang");
  const tag = ollamaTag(a.get("model") || "");
  if (tag) {
    if (!tag.model) throw new Error(t("st.ollama.unknown", { tag: tag.tag }));
    a.set("model", tag.model.alias || tag.model.id);
    a.set("engine", "ollama");
    if (!a.has("weights")) a.set("weights", tag.quant);
    return { q: a, note: t("st.ollama", { tag: tag.tag, name: tag.model.name, quant: a.get("weights") }) };
  }
  return { q: a, note: null };
}

async function select(ev) {
  if (ev) ev.preventDefault();
  const q = params();
  const u = new URL(location.href);
  u.search = q.toString();
  if (LANG) u.searchParams.set("lang", LANG);
  history.replaceState(null, "", u);
  const st = $("#status");
  st.className = "";
  if (!q.get("model")) { st.textContent = t("st.nomodel"); return; }
  st.textContent = t("st.estimating");
  try {
    const { q: aq, note } = apiQuery(q);
    const eq = new URLSearchParams(aq);
    eq.delete("hours");
    const pq = new URLSearchParams(aq);
    pq.delete("gpu");
    const [est, pick] = await Promise.all([api("/api/v1/estimate", eq), api("/api/v1/pick", pq)]);
    const S = { q: aq, est, pick, note, best: null, bestEst: null };
    const cur = pick.currency;
    S.best = pick.offers.find((o) => o.fits && o.price_per_hour != null && o.currency === cur) || null;
    if (!est.fit && est.vllm && S.best) {
      /* vLLM's KV room depends on the card: the estimate on the cheapest one */
      const bq = new URLSearchParams(eq);
      bq.set("gpu", S.best.gpu + ":" + S.best.count);
      S.bestEst = await api("/api/v1/estimate", bq).catch(() => null);
    }
    SEL = S;
    renderSelection(S);
    /* on a phone the form fills the screen: the answer comes into view after a question */
    if (ev && window.innerWidth < 700) st.scrollIntoView({ block: "start" });
    chart(S);
    costChart(S);
  } catch (e) {
    SEL = null;
    CHART = null;
    st.className = "error";
    st.textContent = e.message;
    $("#result").hidden = true;
  }
}

function renderSelection(S) {
  const { est, pick } = S;
  $("#status").className = "";
  $("#status").textContent = [est.model.name, est.engine, est.weights].join(" · ") + (S.note ? " — " + S.note : "");
  $("#result").hidden = false;
  renderAnswer(S);
  renderVllm(S.est.fit ? S.est : S.bestEst);
  renderBreakdown(S.est.fit ? S.est : S.bestEst || S.est);
  renderCards(S, pick, parseFloat(S.q.get("hours") || "0"));
}

/* the fixes that make it fit a card, as the library computed them */
function fitFixes(est) {
  const out = (est.engine_fixes || []).slice();
  const f = est.fit;
  if (!out.length && f) {
    if (f.max_ctx_tokens) out.push("--ctx " + f.max_ctx_tokens + "  (" + t("next.ctx", { users: est.users, ctx: num(f.max_ctx_tokens) }) + ")");
    if (f.max_users && est.users > 1) out.push("--users " + f.max_users + "  (" + t("next.users", { ctx: num(est.ctx_tokens), users: f.max_users }) + ")");
  }
  return out;
}

/* an engine fix line ("--weights fp8: saves ... - ...", "--max-model-len 5584  (...)"): the
 * flags as code, the library's words after them as text */
function fixLine(x) {
  const m = /^(-[^:(]*?)(?::\s+|\s{2,})(.*)$/.exec(x);
  return m ? el("li", {}, el("code", {}, m[1].trim()), " ", el("span", { class: "muted" }, m[2])) : el("li", {}, x);
}

function offerFix(o, pick) {
  const knobs = [];
  if (o.kv_dtype_fix) knobs.push("--kv-dtype " + o.kv_dtype_fix);
  if (o.fix) knobs.push(o.fix.split(":")[0]);
  if (o.max_ctx_tokens) knobs.push((pick.task === "train" ? "--seq " : "--ctx ") + o.max_ctx_tokens);
  if (o.max_users && pick.users > 1) knobs.push("--users " + o.max_users);
  return knobs;
}

function renderAnswer(S) {
  const { est, pick, best } = S;
  const cur = pick.currency;
  const ans = $("#answer");
  const detail = $("#answer-detail");
  const next = $("#next");
  next.replaceChildren();
  ans.className = "answer";
  const vl = (e) => e && e.vllm && e.vllm.kv_cache_tokens != null;
  const vllmSentence = (name, n, price, e) => t(price != null ? "ans.fits.vllm" : "ans.fits.vllm.noprice",
    { card: subject(name, n), price: money(price, cur), tokens: num(e.vllm.kv_cache_tokens),
      conc: num(e.vllm.max_concurrency, 2), ctx: tokens(e.ctx_tokens) });
  const bigger = () => best
    ? el("p", { class: "bigger" }, t("next.bigger", { card: cardName(null, best.name, best.count), price: money(best.price_per_hour, cur) }))
    : el("p", {}, t("next.bigger.none"));
  if (est.fit) {
    /* the user's card */
    const f = est.fit;
    const spec = gpuSpec(f.gpu);
    const name = cardName(spec, f.gpu, f.count);
    const price = cardPrice(spec, f.count, cur);
    if (f.fits) {
      ans.textContent = vl(est) ? vllmSentence(name, f.count, price, est)
        : t(price != null ? "ans.fits" : "ans.fits.noprice", { card: subject(name, f.count), spare: gb(f.headroom_bytes), price: money(price, cur) });
      ans.classList.add("ok");
    } else {
      ans.textContent = t("ans.short", { card: subject(name, f.count), short: gb(-f.headroom_bytes) });
      ans.classList.add("no");
      const fx = fitFixes(est);
      if (fx.length) {
        const ul = el("ul", { class: "fixes" });
        for (const x of fx) ul.append(fixLine(x));
        next.append(el("p", {}, t("next.fix")), ul);
      }
      next.append(bigger());
    }
    detail.textContent = t(f.count > 1 ? "ans.cards" : "ans.card",
      { n: f.count, gb: spec ? spec.marketed_gb : "?", gib: gib(f.usable_bytes), need: gib(est.total_bytes) });
    return;
  }
  if (!best) {
    ans.textContent = t("ans.none");
    ans.classList.add("no");
    detail.textContent = "";
    return;
  }
  const spec = gpuSpec(best.gpu);
  const name = cardName(spec, best.gpu, best.count);
  ans.textContent = vl(S.bestEst) ? vllmSentence(name, best.count, best.price_per_hour, S.bestEst)
    : t("ans.fits", { card: subject(name, best.count), spare: gb(best.headroom_bytes), price: money(best.price_per_hour, cur) });
  ans.classList.add("ok");
  detail.textContent = t(best.count > 1 ? "ans.cards" : "ans.card",
    { n: best.count, gb: spec ? spec.marketed_gb : "?", gib: gib(best.usable_bytes), need: gib(best.needs_bytes) });
  /* a cheaper card that a fix makes fit */
  const cheaper = pick.offers.find((o) => !o.fits && o.currency === cur && o.price_per_hour != null &&
                                           o.price_per_hour < best.price_per_hour && offerFix(o, pick).length);
  if (cheaper)
    next.append(el("p", {}, t("next.cheaper", { card: cardName(null, cheaper.name, cheaper.count),
                                                 price: money(cheaper.price_per_hour, cur),
                                                 fix: offerFix(cheaper, pick).join(t("next.or")) })));
}

function renderVllm(e) {
  const box = $("#vllm");
  box.replaceChildren();
  if (!e || !e.vllm || !e.fit || e.vllm.kv_cache_tokens == null) return;
  const v = e.vllm;
  const kv = (e.components.find((c) => c.name === "kv_cache") || {}).bytes;
  const util = v.gpu_memory_utilization;
  box.append(el("h3", {}, t("vllm.h")),
    el("p", {}, t("vllm.budget", { util: num(util * 100), budget: gib(util * e.fit.usable_bytes), usable: gib(e.fit.usable_bytes) })),
    el("p", {}, t("vllm.kv", { kv: gib(kv), tokens: num(v.kv_cache_tokens), conc: num(v.max_concurrency, 2),
                               ctx: num(e.ctx_tokens), users: num(e.users) }) + " " +
                t(v.max_concurrency >= e.users ? "vllm.ok" : "vllm.low")));
}

function compName(n) { return I18N.en["comp." + n] ? t("comp." + n) : n.replace(/_/g, " "); }
function phaseName(p) { return I18N.en["phase." + p] ? t("phase." + p) : p.replace(/_/g, " "); }

/* a bar of components and its legend; colors by component name so phases match */
function bar(comps, total, label, colorOf) {
  const b = el("div", { class: "bar", role: "img", "aria-label": label });
  const legend = el("ul", { class: "legend" });
  for (const c of comps) {
    const s = el("span", { title: compName(c.name) + " " + gib(c.bytes) });
    s.style.width = Math.max(0.5, (100 * c.bytes) / (total || 1)) + "%";
    s.style.background = colorOf(c.name);
    b.append(s);
    const sw = el("i", { "aria-hidden": "true" });
    sw.style.background = colorOf(c.name);
    legend.append(el("li", {}, sw, compName(c.name) + " " + gib(c.bytes)));
  }
  return [b, legend];
}

/* The peak phase's components (ComfyUI loads and unloads per phase: encode, denoise, decode
 * never coexist); for the other engines the phases are when a buffer is made and they all
 * stay, so every component is in the bar. */
function renderBreakdown(e) {
  const box = $("#breakdown");
  box.replaceChildren();
  const comps = e.components.filter((c) => c.device !== "host" && c.bytes > 0);
  const peak = e.diffusion && e.diffusion.peak_phase;
  const exclusive = peak && comps.some((c) => c.phase === peak);
  const inPhase = (c, p) => !c.phase || c.phase === "all" || c.phase === p;
  const names = [...new Set(e.components.map((c) => c.name))];
  const colorOf = (n) => COLORS[names.indexOf(n) % COLORS.length];
  const peakComps = exclusive ? comps.filter((c) => inPhase(c, peak)) : comps;
  const sum = (cs) => cs.reduce((s, c) => s + c.bytes, 0);
  const total = sum(peakComps);
  const head = exclusive ? t("bd.peak.phase", { total: gib(total), phase: phaseName(peak) }) : t("bd.peak", { total: gib(total) });
  box.append(el("p", {}, el("strong", {}, head), e.host_bytes ? t("bd.host", { host: gib(e.host_bytes) }) : ""),
             ...bar(peakComps, total, t("bd.bar", { total: gib(total) }), colorOf));
  if (exclusive) {
    const others = [...new Set(comps.map((c) => c.phase).filter((p) => p && p !== "all" && p !== peak))];
    if (others.length) {
      const d = el("details", { class: "phases" }, el("summary", {}, t("bd.others")));
      for (const p of others) {
        const cs = comps.filter((c) => inPhase(c, p));
        const pt = sum(cs);
        d.append(el("p", {}, t("bd.phase", { phase: phaseName(p), total: gib(pt) })),
                 ...bar(cs, total, t("bd.phase", { phase: phaseName(p), total: gib(pt) }), colorOf));
      }
      box.append(d);
    }
  }
  const as = el("details", { class: "assumptions" }, el("summary", {}, t("bd.assumptions")));
  const ul = el("ul");
  for (const a of e.assumptions || []) ul.append(el("li", {}, a));
  as.append(ul);
  box.append(as);
}

function speedText(o) {
  const s = o.speed || {};
  const parts = [];
  if (s.seconds_per_image != null) parts.push(t("speed.img", { v: num(s.seconds_per_image, 1) }));
  else if (s.seconds_per_clip != null) parts.push(t("speed.clip", { v: num(s.seconds_per_clip, 0) }));
  else if (s.decode_tokens_per_s != null) parts.push(t("speed.tok", { v: num(s.decode_tokens_per_s, 0) }));
  if (o.cost && o.cost.per_result != null) {
    const m = money(o.cost.per_result, o.cost.currency || o.currency, o.cost.per_result < 0.1 ? 4 : 2);
    /* the library's unit is English: the LLM one in the page's language (F-SPD-06) */
    parts.push(o.cost.unit === "1M output tokens" ? t("cost.mtok", { v: m }) : m + (o.cost.unit ? " / " + o.cost.unit : ""));
  }
  return parts.join(" · ") || "-";
}

function renderCards(S, pick, hours) {
  const tb = $("#cards tbody");
  tb.replaceChildren();
  const cur = pick.currency;
  const isVllm = pick.engine === "vllm" || !!pick.vllm;
  const fitting = pick.offers.filter((o) => o.fits && o.price_per_hour != null && o.currency === cur);
  const timed = fitting.some((o) => o.speed || o.cost);
  $("#cards").classList.toggle("timed", timed);
  $("#cards").classList.toggle("jobbed", hours > 0);
  fitting.forEach((o, i) => {
    const spec = gpuSpec(o.gpu);
    /* vLLM takes its utilization budget by design: its headroom is not "tight" */
    const tight = !isVllm && o.headroom_bytes / o.usable_bytes < 0.1;
    const cardCell = el("td", {}, cardName(null, o.name, o.count));
    if (i === 0) cardCell.append(" ", el("span", { class: "tag" }, t("tbl.cheapest")));
    const head = el("td", { class: "num" }, num((100 * o.headroom_bytes) / o.usable_bytes) + " %");
    if (tight) head.append(" ", el("span", { class: "tight" }, t("tbl.tight")));
    if (isVllm) head.append(" ", el("small", {}, t("tbl.vllm")));
    const priceCell = el("td", { class: "num" }, money(o.price_per_hour, o.currency));
    if (o.derived) priceCell.append(el("small", { class: "derived" }, o.count === 2 ? t("tbl.derived") : t("tbl.derived.n", { n: o.count })));
    tb.append(el("tr", { class: i === 0 ? "cheapest" : null },
      cardCell,
      el("td", {}, (o.count > 1 ? o.count + " × " : "") + (spec ? spec.marketed_gb + " GB" : ""),
         el("small", {}, t("tbl.usable", { gib: gib(o.usable_bytes) }))),
      head, priceCell,
      el("td", { class: "num min" }, money(o.price_per_minute, o.currency, 4)),
      el("td", { class: "num job" }, hours ? money(o.price_per_hour * hours, o.currency) : "-"),
      el("td", { class: "speed" }, speedText(o))));
  });
  $("#cards").hidden = fitting.length === 0;
  const sh = $("#short");
  sh.replaceChildren();
  for (const o of pick.offers.filter((x) => !x.fits && x.currency === cur)) {
    const knobs = offerFix(o, pick);
    sh.append(el("li", {}, t("short.line", { card: cardName(null, o.name, o.count), short: gb(-o.headroom_bytes) }) +
      (knobs.length ? t("short.fix", { fix: knobs.join(t("next.or")) }) +
                      (o.price_per_hour != null ? t("short.price", { price: money(o.price_per_hour, cur) }) : "") : "")));
  }
}

/* ----------------------------------------------------- euros and time per result */

function dur(s) {
  return s < 120 ? num(s, s < 10 ? 1 : 0) + " s" : s < 7200 ? num(s / 60, 1) + " min" : num(s / 3600, 1) + " h";
}

/* issue 24: euros and time per result by card, from pick --rank cost (F-SPD-06, F-SPD-10..16):
 * one pair of bars per card that fits, cheapest per result first; a card where it only runs
 * with offload is listed with its flags */
async function costChart(S) {
  const box = $("#costchart"), h = $("#costchart-h");
  const q = new URLSearchParams(S.q);
  q.delete("gpu");
  q.set("rank", "cost");
  let pick;
  try { pick = await api("/api/v1/pick", q); } catch (err) { pick = null; }
  if (SEL !== S) return;
  const cur = pick ? pick.currency : null;
  const rows = (pick ? pick.offers : []).filter((o) => o.currency === cur &&
    (o.fits ? o.cost && o.cost.per_result > 0 : o.offload_cost && o.offload_cost.per_result > 0))
    .map((o) => {
      const c = o.fits ? o.cost : o.offload_cost;
      const js = o.fits ? o.job_speed : o.offload_speed;
      // an LLM's time is per 1M output tokens, with its layer split too (o.spill)
      const tps = o.fits ? o.speed && o.speed.output_tokens_per_s : o.spill && o.spill.output_tokens_per_s;
      const sec = tps ? 1e6 / tps : js ? js.seconds_per_result : null;
      return { o, eur: c.per_result, unit: c.unit, sec, flags: o.fits ? null : o.offload };
    }).sort((a, b) => a.eur - b.eur).slice(0, 8);
  box.hidden = h.hidden = rows.length < 2;
  box.replaceChildren();
  if (rows.length < 2) return;
  h.textContent = t("cost.h", { unit: rows[0].unit });
  const emax = Math.max(...rows.map((r) => r.eur)), smax = Math.max(...rows.map((r) => r.sec || 0));
  for (const r of rows) {
    const name = cardName(null, r.o.name, r.o.count) + (r.flags ? " " + t("cost.with", { flags: r.flags }) : "");
    const eurBar = el("div", { class: "bar costbar", title: t("cost.eur") },
      el("span", { class: "eur", style: "width:" + (100 * r.eur / emax).toFixed(1) + "%" }));
    const secBar = el("div", { class: "bar costbar", title: t("cost.time") },
      el("span", { class: "time", style: "width:" + (r.sec ? 100 * r.sec / smax : 0).toFixed(1) + "%" }));
    box.append(el("div", { class: "costrow" + (r.flags ? " offload" : "") },
      el("p", {}, name + ": " + money(r.eur, cur, r.eur < 0.1 ? 4 : 2) + " / " + r.unit +
         (r.sec ? " · " + dur(r.sec) + " / " + r.unit : "")), eurBar, secBar));
  }
}

/* ------------------------------------------------------------------ the chart */

/* memory against context (LLMs), sequence (training), resolution (images) or frames (video),
 * from a few estimate calls; the catalog's card sizes as horizontal lines */
async function chart(S) {
  const e = S.est;
  const box = $("#chart");
  const kind = e.task === "train" ? "seq" : e.task === "image" ? "res" : e.task === "video" ? "frames" : "ctx";
  const xs = { ctx: [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072],
               seq: [512, 1024, 2048, 4096, 8192, 16384, 32768],
               res: [512, 768, 1024, 1280, 1536, 2048],
               frames: [17, 33, 49, 81, 121] }[kind];
  const you = kind === "res" ? (e.diffusion || {}).width : kind === "frames" ? (e.diffusion || {}).frames : e.ctx_tokens;
  box.replaceChildren(el("p", { class: "muted" }, t("chart.loading")));
  const base = new URLSearchParams(S.q);
  base.delete("gpu");
  base.delete("hours");
  base.delete(kind === "seq" ? "ctx" : kind);
  const pts = await Promise.all(xs.map(async (x) => {
    const q = new URLSearchParams(base);
    if (kind === "res") { q.set("width", x); q.set("height", x); }
    else if (kind === "frames") q.set("frames", x);
    else q.set("ctx", x);
    try { return { x, y: (await api("/api/v1/estimate", q)).total_bytes }; } catch (err) { return null; }
  }));
  if (SEL !== S) return; /* a newer query took over */
  CHART = { kind, pts: pts.filter((p) => p && p.y), you };
  drawChart(CHART);
}

function drawChart(C) {
  const box = $("#chart");
  $("#chart-h").textContent = t("chart.h." + C.kind);
  box.replaceChildren();
  if (C.pts.length < 2) { box.append(el("p", { class: "muted" }, t("chart.none"))); return; }
  const W = Math.max(280, Math.min(900, box.clientWidth || 600));
  const H = W < 500 ? 230 : 280;
  const m = { l: 48, r: 20, t: 10, b: 40 };
  const ymaxPt = Math.max(...C.pts.map((p) => p.y));
  /* one line per distinct size of a priced card, the smallest above the curve included */
  const sizes = [];
  for (const g of [...GPUS].sort((a, b) => a.usable_bytes - b.usable_bytes)) {
    const price = cardPrice(g, 1, "EUR");
    if (!g.usable_bytes || price == null) continue;
    const last = sizes[sizes.length - 1];
    const c = { b: g.usable_bytes, name: g.name, price };
    /* of cards within 8 % of one size, the cheapest one's line */
    if (last && (g.usable_bytes - last.anchor) / g.usable_bytes < 0.08) {
      if (price < last.price) sizes[sizes.length - 1] = { ...c, anchor: last.anchor };
    } else sizes.push({ ...c, anchor: g.usable_bytes });
  }
  const above = sizes.find((s) => s.b >= ymaxPt);
  const ymax = 1.08 * Math.max(ymaxPt, above ? above.b : 0);
  const lines = sizes.filter((s) => s.b <= (above ? above.b : ymax));
  const log = C.kind === "ctx" || C.kind === "seq";
  const x0 = C.pts[0].x, x1 = C.pts[C.pts.length - 1].x;
  const fx = (x) => m.l + (W - m.l - m.r) * (log ? Math.log2(x / x0) / Math.log2(x1 / x0) : (x - x0) / (x1 - x0));
  const fy = (y) => H - m.b - (H - m.t - m.b) * (y / ymax);
  const G = 1024 ** 3;
  const s = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                         "aria-label": t("chart.aria", { x: t("chart.x." + C.kind) }), class: "chart" });
  /* y grid in GiB */
  const step = [4, 8, 16, 32, 64, 128, 256].find((v) => ymax / G / v <= 6) || 512;
  for (let v = 0; v * G <= ymax; v += step) {
    s.append(svg("line", { x1: m.l, x2: W - m.r, y1: fy(v * G), y2: fy(v * G), class: "grid" }),
             svg("text", { x: m.l - 6, y: fy(v * G) + 4, "text-anchor": "end" }, num(v)));
  }
  s.append(svg("text", { x: 4, y: m.t + 10 }, t("chart.y")));
  for (const p of C.pts)
    s.append(svg("text", { x: fx(p.x), y: H - m.b + 16, "text-anchor": "middle" },
                 C.kind === "res" || C.kind === "frames" ? String(p.x) : tokens(p.x)));
  s.append(svg("text", { x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle", class: "axis" }, t("chart.x." + C.kind)));
  /* card lines with their labels, a line only where its label has room */
  let lastY = Infinity;
  for (const c of lines) {
    const y = fy(c.b);
    if (lastY - y < 15 || y < m.t + 12) continue;
    s.append(svg("line", { x1: m.l, x2: W - m.r, y1: y, y2: y, class: "card" }),
             svg("text", { x: m.l + 4, y: y - 3, class: "card" }, c.name + " · " + gib(c.b)));
    lastY = y;
  }
  s.append(svg("polyline", { points: C.pts.map((p) => fx(p.x) + "," + fy(p.y)).join(" "), class: "need" }));
  for (const p of C.pts) {
    const dot = svg("circle", { cx: fx(p.x), cy: fy(p.y), r: 3.5, class: p.x === C.you ? "need you" : "need" });
    dot.append(svg("title", {}, (C.kind === "res" ? p.x + "×" + p.x : C.kind === "frames" ? p.x : tokens(p.x)) + ": " + gib(p.y)));
    s.append(dot);
  }
  box.append(s);
}

/* ------------------------------------------------------------------ the OOM doctor */

/* What a pasted log shows that is not an error (explain's symptoms[], DESIGN section 8). */
function symptoms(out, list) {
  for (const y of list) {
    out.append(el("h3", { class: "symptom" }, I18N.en["sym." + y.kind] ? t("sym." + y.kind) : y.kind));
    const ul = el("ul");
    for (const s of y.says || []) ul.append(el("li", {}, s));
    out.append(ul);
  }
}

function costText(c) {
  if (!c) return "";
  const parts = [];
  if (c.quality && I18N.en["cost." + c.quality]) parts.push(t("cost." + c.quality));
  if (c.speed_factor != null && Math.abs(1 - c.speed_factor) >= 0.01) {
    /* speed_factor is the throughput after the fix, 1 = unchanged (0.75: "25 % slower") */
    const pct = Math.round(Math.abs(1 - c.speed_factor) * 100);
    parts.push(t(c.speed_factor < 1 ? "cost.slower" : "cost.faster", { v: num(pct) }));
  }
  return parts.join(", ");
}

async function explain(ev) {
  ev.preventDefault();
  const out = $("#diagnosis");
  out.replaceChildren(el("p", {}, t("doc.reading")));
  /* tool, task, card and model go to the library's option table, as the CLI's flags */
  const q = new URLSearchParams();
  for (const [id, key] of [["oom-tool", "tool"], ["oom-task", "task"], ["oom-gpu", "gpu"], ["oom-model", "model"]]) {
    const v = document.getElementById(id).value.trim();
    if (v) q.set(key, v);
  }
  try {
    const x = await api("/api/v1/explain", q, { method: "POST", body: $("#log").value,
                                                 headers: { "Content-Type": "text/plain" } });
    DOC = x;
    renderDoctor(x);
  } catch (e) {
    DOC = null;
    out.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

function plainWords(x, out) {
  const d = x.diagnosis || {};
  const ev = x.events[x.events.length - 1];
  /* one card with that total is named; several of one size (RTX 3090 and 4090) give the size */
  const specs = ev.total_bytes ? gpusByUsable(ev.total_bytes) : [];
  const sizes = new Set(specs.map((g) => g.marketed_gb));
  const card = specs.length === 1 ? t("doc.card.known", { name: specs[0].name, gib: gib(ev.total_bytes) })
    : sizes.size === 1 ? t("doc.card.gb", { gb: specs[0].marketed_gb, gib: gib(ev.total_bytes) })
    : ev.total_bytes ? t("doc.card.size", { gib: gib(ev.total_bytes) }) : null;
  const say = [];
  if (ev.requested_bytes != null) {
    if (card && ev.free_bytes != null) say.push(t("doc.asked", { req: gib(ev.requested_bytes), free: gib(ev.free_bytes), card }));
    else if (card) say.push(t("doc.asked.nofree", { req: gib(ev.requested_bytes), card }));
    else if (ev.free_bytes != null) say.push(t("doc.asked.nocard", { req: gib(ev.requested_bytes), free: gib(ev.free_bytes) }));
    else say.push(t("doc.asked.only", { req: gib(ev.requested_bytes) }));
  }
  const cause = d.cause || "unknown";
  /* the cause's first sentence as the answer, the rest of it after the numbers */
  const words = (I18N.en["cause." + cause] ? t("cause." + cause) : cause.replace(/_/g, " ")).split(/(?<=\.)\s+/);
  out.append(el("p", { class: "answer small " + (cause === "unknown" ? "" : "no") }, words[0]));
  say.push(...words.slice(1));
  if (say.length) out.append(el("p", {}, say.join(" ")));
  if (ev.allocated_bytes != null && ev.reserved_unallocated_bytes != null)
    out.append(el("p", {}, t("doc.held", { held: gib(ev.allocated_bytes + ev.reserved_unallocated_bytes),
                                           alloc: gib(ev.allocated_bytes), cached: gib(ev.reserved_unallocated_bytes) })));
  if ((ev.processes || []).length)
    out.append(el("p", {}, t("doc.procs", { list: ev.processes.map((p) => "PID " + p.pid + " " + gib(p.bytes)).join(", ") })));
  const why = el("details", { class: "why" }, el("summary", {}, t("doc.why")));
  const ul = el("ul");
  for (const s of (d.secondary || [])) ul.append(el("li", {}, String(s).replace(/_/g, " ")));
  for (const e of d.evidence || []) ul.append(el("li", {}, e));
  why.append(ul);
  out.append(why);
}

function renderDoctor(x) {
  const out = $("#diagnosis");
  out.replaceChildren();
  if (!x.events || !x.events.length) {
    out.append(el("p", {}, t((x.symptoms || []).length ? "doc.nooom.sym" : "doc.nooom")));
    symptoms(out, x.symptoms || []);
    return;
  }
  plainWords(x, out);
  out.append(el("h3", {}, t("doc.fixes")));
  const ol = el("ol", { class: "fixlist" });
  for (const f of x.fixes || []) {
    const meta = [];
    meta.push(f.saves_bytes != null ? t("doc.saves", { v: gib(f.saves_bytes) }) : t("doc.saves.none"));
    if (f.still_short_bytes != null) meta.push(f.still_short_bytes > 0 ? t("doc.still", { v: gib(f.still_short_bytes) }) : t("doc.fits"));
    const cost = costText(f.cost);
    if (cost) meta.push(cost);
    const li = el("li", { class: "fix" }, el("strong", {}, f.title), el("div", { class: "meta" }, meta.join(" · ")));
    /* the library's own words on the cost (English): more than the translated summary */
    if (f.cost && f.cost.text && LANG === "en" && !cost.includes(f.cost.text)) li.append(el("div", { class: "muted" }, f.cost.text));
    if (f.command) li.append(el("div", { class: "cmdline" }, el("pre", { class: "cmd" }, f.command), copyButton(f.command)));
    if (f.missing && f.saves_bytes == null) li.append(el("div", { class: "muted" }, f.missing));
    ol.append(li);
  }
  out.append(ol);
  /* DESIGN section 8: a combination of fixes that fits (a list, or an object with one) */
  const combi = x.combination && (Array.isArray(x.combination) ? x.combination
    : x.combination.fixes || x.combination.titles || x.combination.commands);
  if (Array.isArray(combi) && combi.length)
    out.append(el("p", {}, t("doc.combo", { list: combi.map((c) => (typeof c === "string" ? c : c.title || c.command || ""))
                                                        .filter(Boolean).join(" + ") })));
  const b = x.bigger_card;
  if (b && b.price_per_hour != null)
    out.append(el("p", { class: "bigger" }, t("doc.bigger", { card: b.name, price: money(b.price_per_hour, b.currency),
                                                              pmin: money(b.price_per_hour / 60, b.currency, 4) })));
  if ((x.symptoms || []).length) {
    out.append(el("h3", {}, t("doc.also")));
    symptoms(out, x.symptoms);
  }
}

/* ------------------------------------------------------------------ start */

async function catalogs() {
  const [m, g] = await Promise.all([api("/api/v1/models").catch(() => ({ models: [] })),
                                    api("/api/v1/gpus").catch(() => ({ gpus: [] }))]);
  MODELS = m.models || [];
  GPUS = g.gpus || [];
}

async function init() {
  for (const b of document.querySelectorAll(".lang button")) b.addEventListener("click", () => setLang(b.dataset.lang));
  applyLang(pickLang());
  const q = new URLSearchParams(location.search);
  for (const f of FIELDS) {
    const e = document.getElementById(f);
    if (e && q.has(f)) e.value = q.get(f);
  }
  combo($("#model"), modelOptions);
  combo($("#oom-model"), modelOptions);
  combo($("#gpu"), gpuOptions);
  combo($("#oom-gpu"), gpuOptions);
  $("#task").addEventListener("change", showRows);
  $("#model").addEventListener("change", (e) => followModel(e.target.value, $("#task"), $("#engine")));
  $("#oom-model").addEventListener("change", (e) => followModel(e.target.value, $("#oom-task"), null));
  $("#form").addEventListener("submit", select);
  $("#oomform").addEventListener("submit", explain);
  let w = window.innerWidth;
  window.addEventListener("resize", () => { if (CHART && window.innerWidth !== w) { w = window.innerWidth; drawChart(CHART); } });
  showRows();
  await catalogs();
  if (q.has("model")) select();
}

init();
