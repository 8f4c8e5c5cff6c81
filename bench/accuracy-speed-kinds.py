#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench-speed, second half (issue 24): the public image, video, training and offload rows
of measured-speed-public.jsonl against `vramfit estimate --json` (speed, docs/FORMULAS.md
F-SPD-10..17).

Per row: measured, predicted, error. Then leave-one-GPU-out: the kind's one efficiency (F-SPD-14;
for offload the host-memory share ETA_HOST, F-SPD-17) is refitted on the other cards' rows (the
value whose median error over them is zero) and the held-out card's rows are predicted with it;
the medians per kind, with how many rows and cards each rests on. Rows the model cannot take
(a cache method that skips work, settings not stated, a model or card not in the catalog) are
listed as not scored, with the reason. Cards of public rows the catalog lacks come from
bench/speed-cards.tsv, appended to a temporary copy of data/ (never shipped).
Usage: accuracy-speed-kinds.py VRAMFIT REFERENCE_JSONL"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

CARDS = [
    (r"\bH100\b", "h100-sxm"),  # xDiT / BenchmarkFlux: variant not stated; their nodes are SXM
    (r"\bH20\b", "h20"),
    (r"A100 80GB \(NVLink\)", "a100-80gb-sxm"),
    (r"RTX 4090", "rtx-4090"),
    (r"RTX A6000", "rtx-a6000"),
    (r"RTX 3060 12GB", "rtx-3060-12gb"),
    (r"RTX 2080 8GB", "rtx-2080"),
    (r"RTX 2060 SUPER", "rtx-2060-super"),
    (r"Radeon RX 6800 XT", "rx-6800-xt"),
]
MODELS = [
    (r"^FLUX.1-dev$", "flux1-dev"),
    (r"^FLUX.1-schnell$", "flux1-schnell"),
    (r"^HunyuanVideo", "hunyuanvideo"),
    (r"^Wan2.1-T2V-1.3B$", "wan2.1-t2v-1.3b"),
    (r"^Llama 3.1 8B$", "llama-3.1-8b"),
    (r"^Mistral Small 3 ", "mistral-small-3.1-24b"),
    (r"^Qwen3-14B$", "qwen3-14b"),
    (r"^phi-4", "phi-4"),
    (r"^LLaMA 13B$", "@llama-13b"),  # not in the catalog: its config.json below
]
# Models of public rows the catalog lacks, as config.json files written for the bench only: the
# published Hugging Face configs (huggyllama/llama-13b, the LLaMA 13B of llama.cpp's "llama 13B";
# llama-bench prints 13.02 B params and 9.95 GiB at Q6_K, which these reproduce: 13,015,864,320
# params, a 10,678,394,880-byte model buffer).
CONFIGS = {
    "llama-13b": {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "hidden_size": 5120, "intermediate_size": 13824, "num_attention_heads": 40,
                  "num_hidden_layers": 40, "num_key_value_heads": 40, "vocab_size": 32000,
                  "max_position_embeddings": 2048, "rms_norm_eps": 1e-06,
                  "tie_word_embeddings": False, "torch_dtype": "float16"},
}
# Host memory bandwidth of the rows' stated CPUs (vendor specifications): GB/s.
HOST = [
    (r"i9-10900X", 93.9),   # Intel ARK: 4 channels DDR4-2933
    (r"Ryzen 9 7900", 83.2),  # AMD: 2 channels DDR5-5200
]


def match(table, s):
    for pat, v in table:
        if re.search(pat, s or ""):
            return v
    return None


def plan(r):
    """(kind, argv tail, how to read the prediction) or a reason it is not scored."""
    kind, st = r["kind"], r.get("settings") or {}
    model, card = match(MODELS, r["model"]), match(CARDS, r["gpu"])
    if kind not in ("image", "video", "training", "offload"):
        return None
    if any(k in str(st.get("technique", "")) + str(st.get("method", "")).lower()
           for k in ("FBCache", "teacache", "fbcache")):
        return "a cache method (TeaCache, First-Block-Cache) skips work the model does not describe"
    if not model:
        return "model not in the catalog, or variant/resolution/steps not stated: " + r["model"][:40]
    if not card:
        return "card not in the catalog or bench/speed-cards.tsv: " + r["gpu"][:40]
    if model.startswith("@"):
        model = os.path.join(DATA, model[1:], "config.json")
    n = r.get("gpu_count") or 1
    if kind in ("image", "video"):
        args = [model, "--gpu", card]
        res = str(st.get("resolution", ""))
        m = re.search(r"(\d+)x(\d+)", res)
        if m:
            args += ["--width", m.group(1), "--height", m.group(2)]
        if st.get("frames"):
            args += ["--frames", str(st["frames"])]
        if st.get("steps"):
            args += ["--steps", str(st["steps"])]
        if n > 1:
            args += ["--ulysses-degree", str(n)]
        q = r["quantization"]
        if q.startswith("GGUF"):
            args += ["--weights", q.split()[1]]
        if "torch.compile" in r["engine"]:
            args += ["--compile", "on"]
        if "offload_model True" in str(st.get("offload", "")):
            args += ["--engine", "diffusers", "--offload", "model-cpu"]
        elif "diffusers" in r["engine"]:
            args += ["--engine", "diffusers"]
        unit = r["measured"]["unit"]
        scale = 60.0 if unit.startswith("minutes") else 1.0
        return kind, args, "seconds", scale
    if kind == "training":
        method = {"Full finetune": "full", "LoRA": "lora", "QLoRA": "qlora"}.get(st.get("method"))
        if not method:
            return "training method not mapped"
        args = [model, "--task", "train", "--gpu", "%s:%d" % (card, n), "--framework",
                "torchtune", "--method", method, "--batch", str(st.get("batch_size") or 1),
                "--seq", str(st.get("seq_len") or 2048)]
        if st.get("compile"):
            args += ["--compile", "on"]
        return kind, args, "train_tps", 1.0
    # offload: llama.cpp with layers on the CPU
    ngl = st.get("ngl")
    if ngl is None:
        return "offload row without -ngl"
    if str(st.get("backend", "")) == "Vulkan" and str(st.get("test", "")).startswith("pp"):
        # the Vulkan backend of PR 2059's branch (2024-01) moved CPU tensors to the card op by op
        # through its own staging path, before it joined ggml-backend's scheduler (op offload,
        # PR 6155, 2024-03): not the copy per micro-batch of F-SPD-17. Its decode (no offload
        # below 32 tokens) is scored.
        return "Vulkan prompt processing of 2024-01 (pre-scheduler staging path, not F-SPD-17's)"
    host = match(HOST, str(st.get("cpu", "")) + " " + str(r.get("caveats", "")))
    args = [model, "--gpu", card, "--engine", "llama.cpp", "--weights",
            r["quantization"].split()[0], "-ngl", str(ngl)]
    if host:
        args += ["--host-bandwidth", str(host)]
    ctx = st.get("ctx") or 4096
    m = re.match(r"(pp|tg) ?(\d+)$", str(st.get("test", "")))
    if not st.get("ctx") and "llama-bench" in r["engine"] and m:
        ctx = int(m.group(2))  # llama-bench's context is the test's tokens (n_prompt + n_gen)
    if str(st.get("test", "")).startswith("prompt"):
        p = st.get("prompt_tokens") or 512
        args += ["--ctx", str(ctx), "--input-tokens", str(p), "--output-tokens", "1"]
        if st.get("kv"):
            args += ["-ctk", st["kv"], "-ctv", st["kv"]]
        return kind, args, "prefill", 1.0
    args += ["--ctx", str(ctx), "--input-tokens", "1", "--output-tokens", "128"]
    return kind, args, "decode", 1.0


DATA = None  # the bench's copy of data/ (main), where the CONFIGS are written too


def run(vramfit, data, args):
    env = dict(os.environ, VRAMFIT_DATA_DIR=data)
    p = subprocess.run([vramfit, "estimate"] + args + ["--json"], capture_output=True, text=True,
                       env=env)
    try:
        return json.loads(p.stdout), None
    except json.JSONDecodeError:
        return None, (p.stderr.strip().splitlines() or ["no output"])[0][:80]


def parts(d, how):
    """(measured-unit prediction as a function of eta_new / eta_used, eta_used) or a reason."""
    if how in ("seconds", "train_tps"):
        sp = d.get("speed") or {}
        if sp.get("seconds_per_result") is None:
            return None, sp.get("why") or "no speed"
        t, c, eta = sp["seconds_per_result"], sp["compute_seconds"], sp["efficiency"]
        if how == "seconds" and "launch_floor_seconds" in sp:
            # F-SPD-18: the steps take the longer of their GPU time and eager PyTorch's launch
            # floor (scaled by d when refitted); the text encoders and the VAE come after
            ed, fl = sp["encode_decode_seconds"], sp["launch_floor_seconds"]
            gpu = sp["compute_seconds"] - ed + sp["attention_seconds"] + sp["comm_seconds"] + \
                sp["elementwise_seconds"]
            rest = t - max(gpu, fl) - ed
            return (lambda k, d=1.0: max(gpu - (c - ed) * (1 - 1 / k), fl * d) + ed / k + rest), eta
        if how == "seconds":
            return (lambda k, d=1.0: c / k + (t - c)), eta
        tps = sp["tokens_per_s_per_gpu"]
        return (lambda k, d=1.0: tps * t / (c / k + (t - c))), eta
    sp, off = d.get("speed") or {}, d.get("offload_speed") or {}
    if how == "prefill":
        v = sp.get("prefill_tokens_per_s")
        return ((lambda k, d=1.0: v), None) if v else (None, sp.get("why") or "no speed")
    if not off.get("seconds_per_result"):
        return None, "no layers in host memory in the estimate"
    t, o, eta = off["seconds_per_result"], off["offload_seconds"], off["efficiency"]
    return (lambda k, d=1.0: 1.0 / (o / k + (t - o))), eta


def refit2(rows):
    """Image and video (F-SPD-18): the efficiency factor k and the launch floor's factor d,
    least squares of the log errors over rows on a grid; eta x k stays at most 1 (no kernel
    beats the card's peak); d stays 1 where no row's floor binds."""
    import math
    best = None
    kmax = 1.0 / rows[0]["eta"]
    for i in range(121):
        k = 0.25 * (4.0 ** (i / 120.0))
        if k > kmax:
            break
        for j in range(81):
            d = 0.25 * (16.0 ** (j / 80.0))
            # a faint pull to d = 1 settles d where no row's floor binds
            e = sum(math.log(r["f"](k, d) / r["meas"]) ** 2 for r in rows) + \
                1e-6 * math.log(d) ** 2
            if best is None or e < best[0]:
                best = (e, k, d)
    return best[1], best[2]


def refit(rows):
    """The efficiency factor k whose median log error over rows is zero (bisection); for
    image and video also the launch floor's factor (refit2). Returns (k, d)."""
    fit = [r for r in rows if r["eta"]]
    if not fit:
        return 1.0, 1.0
    if fit[0]["kind"] in ("image", "video"):
        return refit2(fit)
    lo, hi = 0.05, 20.0
    for _ in range(60):
        mid = (lo * hi) ** 0.5
        errs = [r["f"](mid) / r["meas"] - 1 for r in fit]
        up = r_is_time(fit[0])
        med = statistics.median(errs)
        # seconds fall as k grows; rates rise
        if (med > 0) == up:
            lo = mid
        else:
            hi = mid
    return (lo * hi) ** 0.5, 1.0


def r_is_time(r):
    return r["how"] == "seconds"


def main():
    vramfit, ref = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    data = tempfile.mkdtemp(prefix="vramfit-bench-")
    try:
        shutil.copytree(os.path.join(here, "..", "data"), data, dirs_exist_ok=True)
        global DATA
        DATA = data
        for name, cfg in CONFIGS.items():
            os.makedirs(os.path.join(data, name))
            with open(os.path.join(data, name, "config.json"), "w") as f:
                json.dump(cfg, f)
        with open(os.path.join(here, "speed-cards.tsv")) as f, \
                open(os.path.join(data, "gpus.tsv"), "a") as g:
            for line in f:
                if not line.startswith("#"):
                    g.write(line)
        score(vramfit, ref, data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def score(vramfit, ref, data):
    rows, skipped, notes = [], [], []
    for line in open(ref):
        r = json.loads(line)
        p = plan(r)
        if p is None:
            continue
        if isinstance(p, str):
            skipped.append((r["id"], r["kind"], p))
            continue
        kind, args, how, scale = p
        d, why = run(vramfit, data, args)
        peak = str((r.get("settings") or {}).get("peak_mem_per_gpu", ""))
        if kind == "training" and peak.endswith("GiB") and d:
            # checkpointing is not stated: take the setting whose estimate is nearer the
            # peak memory the row reports
            want = float(peak.split()[0]) * 2**30
            d2, _ = run(vramfit, data, args + ["--grad-checkpointing", "none"])
            if d2 and "total_bytes" in d2 and abs(d2["total_bytes"] - want) < abs(d.get("total_bytes", 0) - want):
                d, args = d2, args + ["--grad-checkpointing", "none"]
        if kind == "offload" and "--host-bandwidth" not in args:
            notes.append("%s: the row does not state its host: vramfit's default host bandwidth "
                         "(76.8 GB/s)" % r["id"])
        fit = (d or {}).get("fit") or {}
        if kind == "offload" and fit.get("fits") is False and fit.get("max_ctx_tokens"):
            # the row ran at its context; the memory estimate is over the card by a little
            # (phi-4 on the RTX 2080: 83 MiB, 1.1 %). The speed model does not read the context
            # (F-SPD-01/17 use the prompt and answer lengths), so score it at the largest that fits
            over = -fit["headroom_bytes"] / 2**20
            i = args.index("--ctx")
            args = args[:i + 1] + [str(fit["max_ctx_tokens"])] + args[i + 2:]
            d, why = run(vramfit, data, args)
            notes.append("%s: estimate %.0f MiB over the card at the row's context; scored at "
                         "--ctx %d" % (r["id"], over, fit["max_ctx_tokens"]))
        f, eta = (None, why) if d is None else parts(d, how)
        if f is None:
            skipped.append((r["id"], kind, "no prediction: " + str(eta)))
            continue
        card = args[args.index("--gpu") + 1].split(":")[0]
        rows.append({"id": r["id"], "kind": kind, "card": card, "how": how, "f": f, "eta": eta,
                     "meas": r["measured"]["value"] * scale})
    print("%-52s %-8s %12s %12s %7s" % ("row", "kind", "measured", "predicted", "error"))
    for r in rows:
        r["pred"] = r["f"](1.0)
        print("%-52s %-8s %12.4g %12.4g %+6.0f%%" % (r["id"][:52], r["kind"], r["meas"], r["pred"],
                                                    100 * (r["pred"] / r["meas"] - 1)))
    print("\nleave-one-GPU-out (the kind's efficiency refitted on the other cards' rows):")
    summary = {}
    for kind in ("image", "video", "training", "offload"):
        ks = [r for r in rows if r["kind"] == kind]
        cards = sorted({r["card"] for r in ks})
        errs = []
        for c in cards:
            others = [r for r in ks if r["card"] != c]
            mine = [r for r in ks if r["card"] == c]
            if any(r["eta"] for r in mine) and not any(r["eta"] for r in others):
                for r in mine:  # nothing else to refit its efficiency on: not scored
                    r["logo"] = None
                continue
            k, dd = refit(others) if others else (1.0, 1.0)
            for r in ks:
                if r["card"] == c:
                    e = r["f"](k, dd) / r["meas"] - 1
                    r["logo"] = e
                    errs.append(abs(e))
        if ks:
            k_all, d_all = refit(ks)
            eta = next((r["eta"] for r in ks if r["eta"]), None)
            if eta:
                print("  %-9s all rows: efficiency %.2f -> %.2f%s (the constants to set)" % (
                    kind, eta, eta * k_all, "" if kind not in ("image", "video") else
                    ", launch floor x %.2f" % d_all))
        if errs:
            med = statistics.median(errs)
            summary[kind] = (med, len(errs), len(cards))
            print("  %-9s median |error| %5.1f %%  on %d rows, %d cards (%s)%s" % (
                kind, 100 * med, len(errs), len(cards), ", ".join(cards),
                "  FEW ROWS" if len(errs) < 6 else ""))
            for r in ks:
                print("      %-50s %s" % (r["id"][:50], "n/a (no other card's row to refit "
                                         "on)" if r["logo"] is None else
                                         "%+6.0f%%" % (100 * r["logo"])))
    if notes:
        print("\nnotes:")
        for n in notes:
            print("  " + n)
    print("\nnot scored:")
    for i, k, why in skipped:
        print("  %-52s %-8s %s" % (i[:52], k, why))
    allerr = sorted(abs(r["logo"]) for r in rows if r.get("logo") is not None)
    if allerr:
        signed = sorted(r["logo"] for r in rows if r.get("logo") is not None)
        q = lambda p: signed[min(len(signed) - 1, int(p * len(signed)))]
        print("\nall kinds: %d rows; signed leave-one-GPU-out error 10 %% %+.0f%%, 90 %% %+.0f%%"
              % (len(signed), 100 * q(0.1), 100 * q(0.9)))


if __name__ == "__main__":
    main()
