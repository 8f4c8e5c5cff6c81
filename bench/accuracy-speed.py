#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-speed (issue 23): every public LLM row of measured-speed-public.jsonl against the
throughput model of `vramfit estimate --json` (speed, docs/FORMULAS.md F-SPD-01..05).

Prints per row: measured, predicted, error; then the leave-one-GPU-out errors (the model's one
efficiency per kind and engine class recalibrated on the other cards' rows, the held-out card
predicted), medians per kind, Spearman of the card order per source table with >= 4 cards,
and how many rows each figure rests on. Rows that cannot be mapped (a card or model not in the
catalog, a setup the model does not describe) are listed as not scored, with the reason.
Usage: accuracy-speed.py VRAMFIT REFERENCE_JSONL"""
import json
import re
import statistics
import subprocess
import sys

# Row model -> catalog model (same architecture; the note says when it is a sibling).
MODELS = [
    (r"^Meta-Llama-3-8B$|Llama-3.1-8B|^Llama 3.1 8B$", "llama-3.1-8b"),
    (r"^Meta-Llama-3-70B$|Llama-3.3-70B", "llama-3.3-70b"),
    (r"Llama-3.1-405B", "llama-3.1-405b"),
    (r"Qwen3-30B-A3B", "qwen3-30b-a3b"),
    (r"Qwen3-235B-A22B", "qwen3-235b-a22b"),
    (r"^Llama 4 Scout", "llama-4-scout"),
    (r"^Qwen3-14B", "qwen3-14b"),
    (r"^Qwen3-8B", "qwen3-8b"),
    (r"^phi-4", "phi-4"),
    (r"^gpt-oss-20b", "gpt-oss-20b"),
    (r"^gpt-oss-120b", "gpt-oss-120b"),
    (r"^Llama 3.2 3B", "llama-3.2-3b"),
    (r"^Mistral Small 3 ", "mistral-small-3.1-24b"),
    (r"^LLaMA 2 7B|^LLaMA 7B", "llama-2-7b"),
]
# Row card -> catalog card; a row naming a variant the catalog lacks is not scored.
CARDS = [
    (r"RTX PRO 6000 Blackwell", "rtx-pro-6000-blackwell"),
    (r"\bH200\b", "h200"),
    (r"H100 SXM", "h100-sxm"),
    (r"H100 PCIe", "h100-pcie"),
    (r"\bB200\b", "b200"),
    (r"RTX 6000 Ada", "rtx-6000-ada"),
    (r"A100 SXM 80GB|A100 80GB \(NVLink\)", "a100-80gb-sxm"),
    (r"A100 PCIe 80GB", "a100-80gb-pcie"),
    (r"\bA40\b", "a40"),
    (r"RTX A6000", "rtx-a6000"),
    (r"RTX A4000", "rtx-a4000"),
    (r"RTX 4090", "rtx-4090"),
    (r"RTX 5090", "rtx-5090"),
    (r"RTX 3060", "rtx-3060-12gb"),
    (r"A10G", "a10g"),
]


def match(table, s):
    for pat, cid in table:
        if re.search(pat, s):
            return cid
    return None


def weights_of(r):
    q = r["quantization"]
    if q.startswith("Q") or q.startswith("IQ"):
        return q.split()[0]
    if q == "F16":
        return "F16"
    if q == "FP4":
        return "nvfp4"
    if q == "FP8":
        return "fp8"
    if q.lower().startswith("bf16"):
        return "bf16"
    if q.startswith("MXFP4"):
        return "mxfp4"
    if q.startswith("Ollama default"):
        return "mxfp4" if "gpt-oss" in r["model"] else "Q4_K_M"
    return None


def plan(r):
    """(argv tail, JSON key, class) for a row, or a reason it is not scored."""
    kind, eng, st = r["kind"], r["engine"], r.get("settings") or {}
    model = match(MODELS, r["model"])
    card = match(CARDS, r["gpu"])
    w = weights_of(r)
    if kind == "offload":
        return "offload rows: the next issue (layers on the host)"
    if not model:
        return "model not in the catalog: " + r["model"][:50]
    if not card:
        return "card not in the catalog (or variant not stated): " + r["gpu"][:50]
    if not w:
        return "quantization not mapped: " + r["quantization"][:40]
    n = r.get("gpu_count") or 1
    gguf = "llama.cpp" in eng or "Ollama" in eng
    args = [model, "--gpu", "%s:%d" % (card, n), "--weights", w]
    args += ["--engine", "llama.cpp"] if gguf else []
    if kind == "llm-decode":
        if not gguf:
            return "decode row of a server engine: single-sequence setup not stated"
        test = str(st.get("test") or "tg128")
        m = re.search(r"tg\s*(\d+)", test)
        out = int(m.group(1)) if m else 128
        return args + ["--ctx", str(out + 64), "--input-tokens", "1", "--output-tokens",
                       str(out)], "decode_tokens_per_s", "gguf"
    if kind == "llm-prefill":
        test = str(st.get("test") or "")
        m = re.search(r"pp\s*(\d+)", test)
        if not m:
            return "prefill row without a pp size: " + test[:30]
        p = int(m.group(1))
        cls = ("gguf16" if w in ("F16", "bf16") else "gguf") if gguf else "server"
        return args + ["--ctx", str(p + 64), "--input-tokens", str(p), "--output-tokens",
                       "1"], "prefill_tokens_per_s", cls
    if kind == "llm-serving":
        if "TensorRT" not in eng:
            return "serving row without a stated batch and lengths the model can take"
        i, o = st.get("input_len"), st.get("output_len")
        if not i or not o:
            return "serving row without input/output lengths"
        return args + ["--ctx", str(i + o), "--users", "2048", "--input-tokens", str(i),
                       "--output-tokens", str(o)], "output_tokens_per_s", "server"
    return "kind not modelled: " + kind


def predict(vramfit, args, key):
    p = subprocess.run([vramfit, "estimate"] + args + ["--json"], capture_output=True, text=True)
    try:
        sp = json.loads(p.stdout).get("speed") or {}
    except json.JSONDecodeError:
        return None, (p.stderr.strip().splitlines() or ["no output"])[0][:70]
    v = sp.get(key)
    return (v, None) if v else (None, sp.get("why") or "no speed")


def spearman(a, b):
    def ranks(x):
        order = sorted(range(len(x)), key=lambda k: x[k])
        r = [0.0] * len(x)
        for pos, k in enumerate(order):
            r[k] = pos
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))


def table_of(r):
    ctx = r.get("quote_context") or ""
    m = re.search(r'table "([^"]+)"', ctx)
    st = r.get("settings") or {}
    if m:
        return "%s %s/%s" % (m.group(1), st.get("input_len"), st.get("output_len"))
    return "%s %s %s %s" % (r["source_url"].split("/")[4], r["model"], r["quantization"],
                            st.get("test") or r["kind"])


def main():
    vramfit, ref = sys.argv[1], sys.argv[2]
    rows = [json.loads(l) for l in open(ref) if l.strip()]
    rows = [r for r in rows if r["kind"].startswith("llm") or
            (r["kind"] == "offload" and "llama" in r["engine"])]
    scored, skipped = [], []
    for r in rows:
        p = plan(r)
        if isinstance(p, str):
            skipped.append((r, p))
            continue
        args, key, cls = p
        v, why = predict(vramfit, args, key)
        if v is None:
            skipped.append((r, "vramfit: " + why))
            continue
        card = args[2].split(":")[0]
        scored.append(dict(r=r, pred=v, key=key, cls=cls, card=card, kind=r["kind"],
                           meas=r["measured"]["value"]))
    # leave-one-GPU-out: the kind's efficiency rescaled by the median measured/predicted of the
    # other cards' rows of the same kind and class (the prediction is proportional to it)
    for s in scored:
        others = [t["meas"] / t["pred"] for t in scored
                  if t["kind"] == s["kind"] and t["cls"] == s["cls"] and t["card"] != s["card"]]
        s["logo"] = s["pred"] * statistics.median(others) if others else None
    cards = sorted({s["card"] for s in scored})
    half = set(cards[0::2])  # the calibration half: every other card, alphabetically
    if "--calibrate" in sys.argv:
        for kind, cls in sorted({(s["kind"], s["cls"]) for s in scored}):
            ks = [s for s in scored if s["kind"] == kind and s["cls"] == cls and s["card"] in half]
            if ks:
                print("CAL %s %s ratio %.3f err %.3f rows %d" % (kind, cls, statistics.median(
                    [s["meas"] / s["pred"] for s in ks]), statistics.median(
                    [abs(s["pred"] - s["meas"]) / s["meas"] for s in ks]), len(ks)))
        return
    print("%-44s %-12s %-22s %10s %10s %7s %7s" % ("row", "kind", "card", "measured",
                                                   "predicted", "err", "LOGO"))
    for s in scored:
        e = (s["pred"] - s["meas"]) / s["meas"]
        lo = "%+6.0f%%" % (100 * (s["logo"] - s["meas"]) / s["meas"]) if s["logo"] else "    n/a"
        print("%-44s %-12s %-22s %10.1f %10.1f %+6.0f%% %s" % (s["r"]["id"][:44], s["kind"],
              s["card"], s["meas"], s["pred"], 100 * e, lo))
    print("\nmedians of |error| per kind (rows, cards):")
    for kind in sorted({s["kind"] for s in scored}):
        ks = [s for s in scored if s["kind"] == kind]
        e = [abs(s["pred"] - s["meas"]) / s["meas"] for s in ks]
        lg = [abs(s["logo"] - s["meas"]) / s["meas"] for s in ks if s["logo"]]
        ratio = statistics.median([s["meas"] / s["pred"] for s in ks])
        ho = [abs(s["pred"] - s["meas"]) / s["meas"] for s in ks if s["card"] not in half]
        print("  %-12s shipped %5.1f %%  leave-one-GPU-out %5.1f %%  measured/predicted median "
              "%.2f  (%d rows, %d cards)" % (kind, 100 * statistics.median(e),
                                             100 * statistics.median(lg) if lg else -1, ratio,
                                             len(ks), len({s["card"] for s in ks})))
        if ho:
            print("  %-12s shipped on the cards not calibrated on: %5.1f %% (%d rows)" %
                  ("", 100 * statistics.median(ho), len(ho)))
    print("\nSpearman of the card order per source table with >= 4 cards:")
    groups = {}
    for s in scored:
        unit = "%s x%d" % (s["card"], s["r"].get("gpu_count") or 1)
        groups.setdefault(table_of(s["r"]), {}).setdefault(unit, s)
    for t, by in sorted(groups.items()):
        if len(by) < 4:
            continue
        m = [x["meas"] for x in by.values()]
        p = [x["pred"] for x in by.values()]
        print("  %-60s rho %+.2f (%d cards)" % (t[:60], spearman(m, p), len(by)))
    print("\nnot scored (%d rows):" % len(skipped))
    for r, why in skipped:
        print("  %-50s %s" % (r["id"][:50], why))
    print("\n%d LLM rows: %d scored, %d not scored" % (len(rows), len(scored), len(skipped)))


if __name__ == "__main__":
    main()
