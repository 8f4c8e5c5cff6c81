// vramfit's web page: the VRAM selector and the OOM doctor, on the JSON API of `vramfit serve`
// (/api/v1/estimate, /api/v1/pick, /api/v1/explain, /api/v1/models). Plain JS, no framework;
// the selector's state lives in the query string so a URL can be shared.
"use strict";

const $ = (sel) => document.querySelector(sel);
const COLORS = ["#0b5fff", "#ff8c00", "#0a7a2f", "#b00020", "#7a3cff", "#008b8b", "#c71585", "#6b6b00", "#444"];
const FIELDS = ["model", "task", "engine", "ctx", "users", "weights", "kv-dtype", "method", "batch",
                "grad-checkpointing", "res", "frames", "hours"];

function gib(b) {
  if (b == null) return "?";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(2) : b) + " " + u[i];
}

function money(v, cur) {
  if (v == null) return "-";
  return (cur === "EUR" ? "€" : cur + " ") + (v < 0.1 ? v.toFixed(4) : v.toFixed(2));
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

// the form's state as query parameters: visible, non-empty fields only
function params() {
  const task = $("#task").value;
  const q = new URLSearchParams();
  for (const f of FIELDS) {
    const e = document.getElementById(f);
    if (!e || !e.value) continue;
    if (e.classList.contains("hidden") || (e.closest(".row") && e.closest(".row").classList.contains("hidden"))) continue;
    q.set(f, e.value);
  }
  if (task === "infer") q.delete("task");
  return q;
}

function showRows() {
  const task = $("#task").value;
  for (const r of document.querySelectorAll("#form .row")) {
    const cls = [...r.classList].filter((c) => c !== "row");
    r.classList.toggle("hidden", cls.length > 0 && !cls.includes(task));
  }
  const TASKS = ["infer", "train", "image", "video"];
  for (const e of document.querySelectorAll("#form label, #form input, #form select")) {
    if (TASKS.some((t) => e.classList.contains(t))) e.classList.toggle("hidden", !e.classList.contains(task));
  }
}

async function api(path, q, init) {
  const r = await fetch(path + (q ? "?" + q : ""), init);
  const body = await r.json().catch(() => ({ error: { message: "not JSON: HTTP " + r.status } }));
  if (!r.ok) throw new Error(body.error ? body.error.message : "HTTP " + r.status);
  return body;
}

function breakdown(est) {
  const box = $("#breakdown");
  box.replaceChildren();
  const comps = est.components.filter((c) => c.device !== "host" && c.bytes > 0);
  const total = est.total_bytes || 1;
  const bar = el("div", { class: "bar", role: "img", "aria-label": "memory breakdown, " + gib(est.total_bytes) });
  const legend = el("div", { class: "legend" });
  comps.forEach((c, i) => {
    const color = COLORS[i % COLORS.length];
    const s = el("span", { title: c.name + " " + gib(c.bytes) });
    s.style.width = Math.max(0.5, (100 * c.bytes) / total) + "%";
    s.style.background = color;
    bar.append(s);
    const sw = el("i");
    sw.style.background = color;
    legend.append(el("span", {}, sw, c.name.replace(/_/g, " ") + " " + gib(c.bytes)));
  });
  box.append(el("p", {}, el("strong", {}, "Needs " + gib(est.total_bytes) + " per GPU"),
                est.host_bytes ? " (+ " + gib(est.host_bytes) + " of host RAM)" : ""), bar, legend);
}

function cards(pick, hours) {
  const tb = $("#cards tbody");
  tb.replaceChildren();
  const fitting = pick.offers.filter((o) => o.fits && o.price_per_hour != null && o.currency === pick.currency);
  fitting.forEach((o, i) => {
    const tight = o.headroom_bytes / o.usable_bytes < 0.1;
    const tr = el("tr", { class: (i === 0 ? "cheapest " : "") + (tight ? "tight" : "") },
      el("td", {}, (o.count > 1 ? o.count + "× " : "") + o.name + (i === 0 ? " - cheapest" : "")),
      el("td", { class: "num" }, gib(o.usable_bytes * o.count)),
      el("td", { class: "num" }, Math.round((100 * o.headroom_bytes) / o.usable_bytes) + " %"),
      el("td", { class: "num" }, money(o.price_per_hour, o.currency)),
      el("td", { class: "num" }, money(o.price_per_minute, o.currency)),
      el("td", { class: "num job" }, hours ? money(o.price_per_hour * hours, o.currency) : "-"));
    tb.append(tr);
  });
  $("#cards").hidden = fitting.length === 0;
  const sh = $("#short");
  sh.replaceChildren();
  for (const o of pick.offers.filter((o) => !o.fits)) {
    // the knob that makes it fit this smaller card, as the CLI computes it
    const knobs = [];
    if (o.kv_dtype_fix) knobs.push("--kv-dtype " + o.kv_dtype_fix);
    if (o.fix) knobs.push(o.fix.split(":")[0]);
    if (o.max_ctx_tokens) knobs.push((pick.task === "train" ? "--seq " : "--ctx ") + o.max_ctx_tokens);
    if (o.max_users && pick.users > 1) knobs.push("--users " + o.max_users);
    const price = o.price_per_hour != null ? " for " + money(o.price_per_hour, o.currency) + "/h" : "";
    sh.append(el("li", {}, o.name + ": short by " + gib(-o.headroom_bytes) +
                 (knobs.length ? " - fits with " + knobs.join(", or ") + price : "")));
  }
  if (!fitting.length) $("#status").textContent = "No priced card in the catalog holds it as asked.";
}

async function select(ev) {
  if (ev) ev.preventDefault();
  const q = params();
  history.replaceState(null, "", "?" + q.toString() + location.hash);
  const st = $("#status");
  st.className = "";
  st.textContent = "Estimating…";
  try {
    const eq = new URLSearchParams(q);
    eq.delete("hours"); /* a pick-only flag */
    const est = await api("/api/v1/estimate", eq);
    breakdown(est);
    const pick = await api("/api/v1/pick", q);
    st.textContent = est.model.name + " · " + est.engine + " · " + est.weights;
    cards(pick, parseFloat(q.get("hours") || "0"));
  } catch (e) {
    st.className = "error";
    st.textContent = e.message;
    $("#breakdown").replaceChildren();
    $("#cards").hidden = true;
  }
}

function copyButton(text) {
  const b = el("button", { type: "button", class: "copy", "aria-label": "copy: " + text }, "copy");
  b.addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(text));
  return b;
}

/* What a pasted log shows that is not an error (explain's symptoms[], DESIGN section 8). */
const SYMPTOM_TITLES = {
  ollama_cpu_split: "ollama ps: the model is split between CPU and GPU",
  nvidia_smi: "nvidia-smi: memory in use",
  vllm_startup: "vLLM start-up: the KV cache",
  recovered: "Recovered: the run went on",
  not_a_failure: "Allocator warning: not a failure",
};

function symptoms(out, list) {
  for (const y of list) {
    out.append(el("h3", { class: "symptom" }, SYMPTOM_TITLES[y.kind] || y.kind));
    const ul = el("ul");
    for (const s of y.says || []) ul.append(el("li", {}, s));
    out.append(ul);
  }
}

async function explain(ev) {
  ev.preventDefault();
  const out = $("#diagnosis");
  out.replaceChildren(el("p", {}, "Reading the log…"));
  const q = new URLSearchParams();
  if ($("#oom-model").value) q.set("model", $("#oom-model").value);
  try {
    const x = await api("/api/v1/explain", q, { method: "POST", body: $("#log").value,
                                                 headers: { "Content-Type": "text/plain" } });
    out.replaceChildren();
    if (!x.events || !x.events.length) {
      if (!(x.symptoms || []).length) {
        out.append(el("p", {}, "No out-of-memory error found in the text."));
        return;
      }
      out.append(el("p", {}, "No out-of-memory error found; what the text shows instead:"));
      symptoms(out, x.symptoms);
      return;
    }
    const d = x.diagnosis || {};
    out.append(el("h3", {}, "Cause: " + (d.cause || "unknown").replace(/_/g, " ")));
    const ev0 = x.events[x.events.length - 1];
    if (ev0.requested_bytes != null)
      out.append(el("p", {}, "Failed request " + gib(ev0.requested_bytes) +
                    (ev0.total_bytes ? " on a card of " + gib(ev0.total_bytes) : "") +
                    (ev0.free_bytes != null ? ", " + gib(ev0.free_bytes) + " free" : "")));
    const ul = el("ul");
    for (const e of d.evidence || []) ul.append(el("li", {}, e));
    out.append(ul);
    out.append(el("h3", {}, "Fixes, in the order to try them"));
    for (const f of x.fixes || []) {
      const saves = f.saves_bytes != null ? " - saves ~" + gib(f.saves_bytes) : "";
      out.append(el("div", { class: "fix" }, el("strong", {}, f.title), saves, el("br"),
                    el("pre", { class: "cmd" }, f.command), copyButton(f.command)));
    }
    if ((x.symptoms || []).length) {
      out.append(el("h3", {}, "Also in the text (not errors)"));
      symptoms(out, x.symptoms);
    }
  } catch (e) {
    out.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

async function models() {
  try {
    const cat = await api("/api/v1/models");
    const dl = $("#models");
    for (const m of cat.models || cat) dl.append(el("option", { value: m.alias || m.id }, m.name || m.id));
  } catch (e) { /* the field still takes any id */ }
}

function init() {
  const q = new URLSearchParams(location.search);
  for (const f of FIELDS) {
    const e = document.getElementById(f);
    if (e && q.has(f)) e.value = q.get(f);
  }
  $("#task").addEventListener("change", showRows);
  $("#form").addEventListener("submit", select);
  $("#oomform").addEventListener("submit", explain);
  showRows();
  models();
  if (q.has("model")) select();
}

init();
