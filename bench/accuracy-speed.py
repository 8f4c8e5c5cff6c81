#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-speed (issue 23): every public LLM row of measured-speed-public.jsonl against the
throughput model of `vramfit estimate --json` (speed, docs/FORMULAS.md F-SPD-01..05).

Prints per row: measured, predicted, error, the leave-one-GPU-out error and whether the row is
in the calibration half (every row of the reference file sorted by id, every other one: the
half speed.c's constants were fitted on, F-SPD-04). Leave-one-GPU-out: for each card, the model's constants are recalibrated
on the other cards' rows and the card's rows predicted. llama.cpp decode: the two time terms
(the roofline part and the fixed part, `speed.decode_fixed_s`) rescaled by least squares of
the log error; other kinds: the one efficiency rescaled by the median measured/predicted (the
prediction is proportional to it). Then medians per kind (all rows, held-out half, LOGO), the
Spearman of the card order per source table with >= 4 cards (all its rows, and the held-out
half's), the measurement noise no card figure explains (pairs of rows of one table predicted
within 1 % of each other) and what an exact model would score with it, the best rho any model
can reach that keeps one card on more cards of a layer split no faster than on fewer ("best
physical"), and for a table below 0.9 the pairs the prediction orders against the measurement
(measured and predicted gap, and whether the measured one is within the pair noise); and how
many rows each figure rests on. Rows that cannot be scored (a card or model not in the catalog, a setup the model
does not describe) are listed with the reason.
Usage: accuracy-speed.py VRAMFIT REFERENCE_JSONL [--calibrate]"""
import json
import math
import random
import re
import statistics
import subprocess
import sys

# Row model -> catalog model (same architecture; the note says when it is a sibling).
MODELS = [
    (r"^Meta-Llama-3-8B($| \(fine-tune, same architecture\))|Llama-3.1-8B|^Llama 3.1 8B$",
     "llama-3.1-8b"),
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
    # CodeLlama-7B: Llama 2 7B's layers and widths, vocabulary 32016 instead of 32000
    (r"^CodeLlama-7B$", "llama-2-7b"),
]
# Row card -> catalog card; a row naming a variant the catalog lacks is not scored.
CARDS = [
    (r"RTX PRO 6000 Blackwell", "rtx-pro-6000-blackwell"),
    (r"\bH200\b", "h200"),
    (r"H100 SXM", "h100-sxm"),
    (r"H100 PCIe", "h100-pcie"),
    (r"\bB200\b", "b200"),
    (r"RTX 6000 Ada", "rtx-6000-ada"),
    (r"RTX 5000 Ada", "rtx-5000-ada"),
    (r"RTX 4000 Ada", "rtx-4000-ada"),
    (r"RTX 3080 Ti", "rtx-3080-ti"),
    (r"RTX 3080 10GB", "rtx-3080"),
    (r"RTX 3090 Ti", "rtx-3090-ti"),
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
    if q.lower().startswith("bf16") or q == "not stated (bf16 default)":
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
    if "disaggregation" in eng:
        return ("prefill/decode disaggregation with expert parallelism over nodes: not "
                "modelled")
    if kind == "offload":
        return "offload rows: scored by bench/accuracy-speed-kinds.py (F-SPD-17)"
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
        i, o, users = st.get("input_len"), st.get("output_len"), 2048
        if "vLLM" in eng and st.get("successful_requests") and st.get("total_input_tokens"):
            # benchmark_serving at an infinite request rate: every request at once, the mean
            # lengths from the totals
            users = st["successful_requests"]
            i = round(st["total_input_tokens"] / users)
            o = round(st["total_generated_tokens"] / users)
            args = args[:2] + ["%s:%d" % (card, n), "--engine", "vllm", "--weights", "bf16"]
        elif "TensorRT" not in eng:
            return "serving row without a stated batch and lengths the model can take"
        if not i or not o:
            return "serving row without input/output lengths"
        return args + ["--ctx", str(i + o), "--users", str(users), "--input-tokens", str(i),
                       "--output-tokens", str(o)], "output_tokens_per_s", "server"
    return "kind not modelled: " + kind


def predict(vramfit, args, key):
    p = subprocess.run([vramfit, "estimate"] + args + ["--json"], capture_output=True, text=True)
    try:
        sp = json.loads(p.stdout).get("speed") or {}
    except json.JSONDecodeError:
        return None, (p.stderr.strip().splitlines() or ["no output"])[0][:70]
    v = sp.get(key)
    return (v, sp.get("decode_fixed_s") or 0.0) if v else (None, sp.get("why") or "no speed")


def spearman(a, b):
    def ranks(x):  # ties share their mean rank
        return [sum(1 for y in x if y < v) + (sum(1 for y in x if y == v) - 1) / 2 for v in x]
    ra, rb = ranks(a), ranks(b)  # Pearson of the ranks (the tie-corrected Spearman)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else 0.0


def table_of(r):
    ctx = r.get("quote_context") or ""
    m = re.search(r'table "([^"]+)"', ctx)
    st = r.get("settings") or {}
    if m:
        return "%s %s/%s" % (m.group(1), st.get("input_len"), st.get("output_len"))
    return "%s %s %s %s" % (r["source_url"].split("/")[4], r["model"], r["quantization"],
                            st.get("test") or r["kind"])


def log_loss(rows, a, b):
    return sum(math.log((a * (s["pred_t"] - s["fixed"]) + b * s["fixed"]) * s["meas"]) ** 2
               for s in rows)


def refit_decode(rows):
    """(a, b): the roofline and fixed time terms rescaled to fit rows (least squares of log)."""
    grid = [(a / 50, b / 20) for a in range(25, 101) for b in range(0, 61)]
    return min(grid, key=lambda g: log_loss(rows, *g))


def leave_one_gpu_out(scored):
    for s in scored:
        same = [t for t in scored if t["kind"] == s["kind"] and t["cls"] == s["cls"]]
        others = [t for t in same if t["card"] != s["card"]]
        if not others:
            s["logo"] = None
        elif s["kind"] == "llm-decode" and s["cls"] == "gguf":
            a, b = refit_decode(others)
            s["logo"] = 1.0 / (a * (s["pred_t"] - s["fixed"]) + b * s["fixed"])
        else:
            s["logo"] = s["pred"] * statistics.median(t["meas"] / t["pred"] for t in others)


def calibrate(scored):
    """What the calibration half says the constants should be, relative to the shipped ones."""
    for kind, cls in sorted({(s["kind"], s["cls"]) for s in scored}):
        ks = [s for s in scored if s["kind"] == kind and s["cls"] == cls and s["cal"]]
        if not ks:
            continue
        extra = ""
        if kind == "llm-decode" and cls == "gguf":
            extra = " roofline x %.2f fixed x %.2f" % refit_decode(ks)
        print("CAL %-12s %-7s measured/predicted %.3f |err| %.3f rows %d%s" % (
            kind, cls, statistics.median(s["meas"] / s["pred"] for s in ks),
            statistics.median(abs(s["pred"] - s["meas"]) / s["meas"] for s in ks), len(ks),
            extra))


def err(s, v):
    return abs(v - s["meas"]) / s["meas"]


def print_medians(scored):
    print("\nmedians of |error| per kind and engine class:")
    for kind, cls in sorted({(s["kind"], s["cls"]) for s in scored}):
        ks = [s for s in scored if s["kind"] == kind and s["cls"] == cls]
        ho = [err(s, s["pred"]) for s in ks if not s["cal"]]
        lg = [err(s, s["logo"]) for s in ks if s["logo"]]
        print("  %-12s %-7s all %5.1f %% (%d rows, %d cards)  held-out half %s  "
              "leave-one-GPU-out %s" % (
                  kind, cls, 100 * statistics.median(err(s, s["pred"]) for s in ks), len(ks),
                  len({s["card"] for s in ks}),
                  "%5.1f %% (%d rows)" % (100 * statistics.median(ho), len(ho)) if ho else "n/a",
                  "%5.1f %% (%d rows)" % (100 * statistics.median(lg), len(lg)) if lg else "n/a"))
    print("per kind, every engine class together:")
    for kind in sorted({s["kind"] for s in scored}):
        ks = [s for s in scored if s["kind"] == kind]
        ho = [err(s, s["pred"]) for s in ks if not s["cal"]]
        lg = [err(s, s["logo"]) for s in ks if s["logo"]]
        print("  %-12s all %5.1f %% (%d rows, %d cards)  held-out half %5.1f %% (%d rows)  "
              "leave-one-GPU-out %5.1f %% (%d rows)" % (
                  kind, 100 * statistics.median(err(s, s["pred"]) for s in ks), len(ks),
                  len({s["card"] for s in ks}), 100 * statistics.median(ho), len(ho),
                  100 * statistics.median(lg), len(lg)))


def noise_sigma(groups):
    """The spread the catalog cannot explain: pairs of rows of one table whose predictions are
    within 1 % of each other (cards the model cannot tell apart, e.g. one chip in two boards)
    differ in measurement by log(a/b); each row's share is the rms of those over sqrt(2)."""
    logs = []
    for by in groups.values():
        xs = list(by.values())
        for i, a in enumerate(xs):
            for b in xs[i + 1:]:
                if abs(math.log(a["pred"] / b["pred"])) < 0.01:
                    logs.append(math.log(a["meas"] / b["meas"]))
    if not logs:
        return None, 0
    return (sum(x * x for x in logs) / len(logs)) ** 0.5 / 2 ** 0.5, len(logs)


def ceiling(meas, sigma, draws=2000):
    """Median Spearman of an exact model against rows measured with a log-normal noise sigma
    (the measured values taken as the truth), and the share of draws at >= 0.9."""
    rng = random.Random(23)  # fixed seed: the bench prints the same figures on every run
    rhos = sorted(spearman(meas, [m * math.exp(rng.gauss(0, sigma)) for m in meas])
                  for _ in range(draws))
    return rhos[len(rhos) // 2], sum(r >= 0.9 for r in rhos) / draws


def best_physical(units, meas):
    """The highest Spearman any model can score on a table if one card on more cards of a
    llama.cpp layer split is never faster than on fewer (one sequence passes the cards one
    after the other and each boundary adds a hand-over, F-SPD-01/02): the predicted order is
    a ranking that keeps each card's counts in that order. Ranks are handed out from the
    slowest up (a subset DP over at most 2^n states): the next rank may go to a unit once
    every count of its card above it has one. None for a table of more than 16 cards."""
    n = len(units)
    if n > 16:
        return None
    parsed = [u.rsplit(" x", 1) for u in units]
    # need[j]: the units that must be slower than unit j (same card, more cards)
    need = [sum(1 << i for i in range(n) if parsed[i][0] == parsed[j][0] and
                int(parsed[i][1]) > int(parsed[j][1])) for j in range(n)]
    ra = [sum(1 for y in meas if y < v) + (sum(1 for y in meas if y == v) - 1) / 2
          for v in meas]
    best = {0: (0.0, [])}
    for mask in range(1 << n):
        if mask not in best:
            continue
        score, order = best[mask]
        k = bin(mask).count("1")
        for j in range(n):
            if mask >> j & 1 or need[j] & ~mask:
                continue
            cand = (score + ra[j] * k, order + [j])
            nxt = mask | 1 << j
            if nxt not in best or cand[0] > best[nxt][0]:
                best[nxt] = cand
    order = best[(1 << n) - 1][1]
    rank = [0] * n
    for r, j in enumerate(order):
        rank[j] = r
    return spearman(meas, rank)


def print_swaps(by, sigma):
    """The pairs a table's prediction orders against the measurement: measured gap, the
    predicted one, and whether the measured gap is within the pair noise (sigma x sqrt 2)."""
    xs = sorted(by.items(), key=lambda kv: -kv[1]["meas"])
    for i, (ua, a) in enumerate(xs):
        for ub, b in xs[i + 1:]:
            if a["meas"] > b["meas"] and a["pred"] < b["pred"]:
                gap = math.log(a["meas"] / b["meas"])
                print("      %-22s > %-22s measured %+5.1f %%, predicted %+6.1f %%%s" % (
                    ua, ub, 100 * (a["meas"] / b["meas"] - 1),
                    100 * (a["pred"] / b["pred"] - 1),
                    "  (within the pair noise)" if sigma and gap < sigma * 2 ** 0.5 else ""))


def print_spearman(scored):
    print("\nSpearman of the card order per source table with >= 4 cards (a card: one kind "
          "of card x its count; the table's rows, one per card):")
    groups = {}
    for s in scored:
        unit = "%s x%d" % (s["card"], s["r"].get("gpu_count") or 1)
        groups.setdefault(table_of(s["r"]), {}).setdefault(unit, s)
    groups = {t: by for t, by in groups.items() if len(by) >= 4}
    sigma, n_pairs = noise_sigma(groups)
    if sigma:
        print("  noise: %d pairs of rows of one table predicted within 1 %% of each other differ "
              "by %.1f %% rms in measurement: %.1f %% per row" % (
                  n_pairs, 100 * sigma * 2 ** 0.5, 100 * sigma))
    n_ok = n_ho = n_ceil = n_reach = 0
    for t, by in sorted(groups.items()):
        m = [x["meas"] for x in by.values()]
        p = [x["pred"] for x in by.values()]
        rho = spearman(m, p)
        n_ok += rho >= 0.9
        ho = [x for x in by.values() if not x["cal"]]
        rho_ho = ("%+.2f (%d)" % (spearman([x["meas"] for x in ho], [x["pred"] for x in ho]),
                                  len(ho)) if len(ho) >= 4 else "n/a (%d)" % len(ho))
        n_ho += len(ho) >= 4 and spearman([x["meas"] for x in ho], [x["pred"] for x in ho]) >= 0.9
        ceil = ""
        if sigma:
            med, share = ceiling(m, sigma)
            n_ceil += med >= 0.9
            ceil = "exact model %+.2f (%3.0f %% >= 0.9)" % (med, 100 * share)
        best = best_physical(list(by), m)
        n_reach += best is not None and best >= 0.9
        print("  %-50s rho %+.2f on %2d rows, held-out %-9s measured max/min %5.2f  %s  "
              "best physical %s  %s" % (
                  t.replace("GPU-Benchmarks-on-LLM-Inference", "XiongjieDai")[:50], rho, len(by),
                  rho_ho, max(m) / min(m), ceil, "n/a" if best is None else "%+.2f" % best,
                  "ok" if rho >= 0.9 else "BELOW 0.9"))
        if rho < 0.9:
            print_swaps(by, sigma)
    print("  %d of %d tables at rho >= 0.9 (held-out half: %d); an exact model measured with %.1f %% "
          "noise per row would reach it on %d of them (median of 2000 draws)" % (
              n_ok, len(groups), n_ho, 100 * (sigma or 0), n_ceil))
    print("  best physical: the highest rho of any order that keeps one card on more cards of a "
          "layer split no faster than on fewer; %d of %d tables can reach 0.9 at all" % (
              n_reach, len(groups)))


def score(vramfit, rows, all_ids):
    scored, skipped = [], []
    # the calibration half: every row of the reference file sorted by id, every other one
    cal = set(sorted(all_ids)[0::2])
    for r in rows:
        p = plan(r)
        if isinstance(p, str):
            skipped.append((r, p))
            continue
        args, key, cls = p
        v, fixed = predict(vramfit, args, key)
        if v is None:
            skipped.append((r, "vramfit: " + fixed))
            continue
        scored.append(dict(r=r, pred=v, pred_t=1.0 / v, fixed=fixed, key=key, cls=cls,
                           card=args[2].split(":")[0], kind=r["kind"], cal=r["id"] in cal,
                           meas=r["measured"]["value"]))
    return scored, skipped


def main():
    vramfit, ref = sys.argv[1], sys.argv[2]
    rows = [json.loads(l) for l in open(ref) if l.strip()]
    all_ids = [r["id"] for r in rows]
    rows = [r for r in rows if r["kind"].startswith("llm") or
            (r["kind"] == "offload" and "llama" in r["engine"])]
    scored, skipped = score(vramfit, rows, all_ids)
    if "--calibrate" in sys.argv:
        calibrate(scored)
        return
    leave_one_gpu_out(scored)
    print("%-44s %-12s %-22s %10s %10s %7s %7s %s" % ("row", "kind", "card", "measured",
                                                      "predicted", "err", "LOGO", "half"))
    for s in scored:
        lo = "%+6.0f%%" % (100 * (s["logo"] - s["meas"]) / s["meas"]) if s["logo"] else "    n/a"
        print("%-44s %-12s %-22s %10.1f %10.1f %+6.0f%% %s %s" % (
            s["r"]["id"][:44], s["kind"], s["card"], s["meas"], s["pred"],
            100 * (s["pred"] - s["meas"]) / s["meas"], lo, "cal" if s["cal"] else "held-out"))
    print_medians(scored)
    print_spearman(scored)
    print("\nnot scored (%d rows):" % len(skipped))
    for r, why in skipped:
        print("  %-50s %s" % (r["id"][:50], why))
    print("\n%d LLM rows: %d scored, %d not scored" % (len(rows), len(scored), len(skipped)))


if __name__ == "__main__":
    main()
