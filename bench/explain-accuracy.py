#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""explain-accuracy.py - is the maintainers' fix among `vramfit explain`'s top 3? (issue 19)

Runs `vramfit explain --json -` on the text of every public OOM example (the jsonl of real
messages from public threads, with the thread's `resolution`) and prints, per row: found,
tool, numbers (request / free / total), cause, the top 3 fixes, and whether the resolution
is among them (or, where the maintainers' answer is "a bigger GPU", whether explain offers
one). The examples are split in two halves by id (sorted ids; even positions tune, odd
positions report) and each half is scored apart.

Which fix "is" the resolution is written below, once per example, from its `resolution`
field (never from explain's output): a regular expression over the top 3 fixes' titles and
commands, "bigger" for a bigger card, or None where the thread states no fix (those rows are
listed, not scored). A row whose check needs a number (vllm-14452: a --max-model-len below
58384) has a function.

Usage: python3 bench/explain-accuracy.py [EXAMPLES.jsonl] [--vramfit build/vramfit] [--markdown]
"""
import os
import json
import re
import subprocess
import sys


def max_len_below(limit):
    def check(text):
        return any(int(v) <= limit for v in re.findall(r"--max-model-len (\d+)", text))

    return check


# id -> (check, what the resolution names). check: a regex, "bigger", a function, or None.
RESOLUTION = {
    "llamacpp-20431": (None, "not stated"),
    "llamacpp-1230": (None, "not stated"),
    "ollama-9782": (None, "not stated"),
    "vllm-10439": (r"gpu-memory-utilization 0\.[5-9]", "raise gpu_memory_utilization to 0.5+"),
    "vllm-qwen-12": (r"--quantization|tensor-parallel", "a quantized model or more GPUs"),
    "vllm-2418": (r"max-model-len|gpu-memory-utilization", "lower max_model_len or raise util."),
    "vllm-14452": (max_len_below(58384), "--max-model-len below 58384"),
    "vllm-20305": (
        r"gpu-memory-utilization 0\.(6[0-5]|[0-5]\d)\b|free the memory other processes",
        "utilization < 0.66 or free the other process",
    ),
    "ollama-10920": (r"smaller tag|more host RAM", "the model cannot fit the RAM: a smaller one"),
    "ollama-13556": (None, "not stated"),
    "comfyui-4936": (None, "not stated"),
    "comfyui-6176": (None, "not stated"),
    "comfyui-6073": (None, "not stated"),
    "tf-segan-42": (r"batch", "reduce the batch size"),
    "jax-afprofile-8": ("bigger", "a more powerful GPU"),
    "jax-13428": (r"XLA_PYTHON_CLIENT_(PREALLOCATE|MEM_FRACTION)", "XLA preallocation settings"),
    "cublas-qwen-873": (r"CUDA_VISIBLE_DEVICES", "a card with enough free VRAM"),
    "cublas-tf-7072": (
        r"memory_growth|ALLOW_GROWTH|per_process_gpu_memory_fraction",
        "allow_growth / memory fraction",
    ),
    "cublas-cntk-1688": (None, "an enhancement (better message), no fix"),
    "triton-vllm-12498": (r"num_stages|BLOCK", "kernel config: smaller BLOCK / num_stages"),
    "nccl-opensora-386": (None, "not stated"),
    "hostoom-qwenvl-135": (r"host RAM|swap", "more system RAM (not a CUDA OOM)"),
    "hostoom-deepspeech-2055": (None, "not stated"),
    "hostoom-nscl-23": (r"host RAM|more RAM", "a machine with more memory"),
    "mps-comfyui-2489": (None, "not stated"),
    "mps-pytorch-105839": (r"quit the apps|other processes", "something else holds 7.42 GB"),
    "hf-bnb-llamachinese-123": (r"CUDA build of bitsandbytes", "a CUDA bitsandbytes build"),
    "pytorch-16417-2024comment": (r"batch", "batch 8 -> 4"),
    "pytorch-appa-3": (
        r"smaller batch|autocast|inference_mode|checkpointing|smaller inputs",
        "optimize the job's memory use",
    ),
    "cuda-err-comfyui-12366": (None, "not stated"),
    "vllm-14452-sampler": (r"max-num-seqs|gpu-memory-utilization", "lower max_num_seqs or util."),
    "vllm-17939": (None, "not stated"),
    "vllm-15105": (None, "not stated"),
    "pytorch21-neurolens-2": (None, "not stated"),
    "pytorch21-generateu-10": (None, "not stated"),
    "pytorch-cads-4": (None, "not stated"),
    "deepspeed-lightning-18134": (r"micro-batch|stage3_", "smaller micro-batch, ZeRO-3 knobs"),
    "ollama-9782-comment": (
        r"num_gpu|num_ctx|OLLAMA_CONTEXT_LENGTH|OLLAMA_GPU_OVERHEAD",
        "lower num_gpu / num_ctx, OLLAMA_GPU_OVERHEAD",
    ),
    "tf-43546": (r"memory_growth|memory limit", "a GPU memory limit / memory growth"),
    "tf-pointcloud-2": (None, "not stated"),
    "cgroup-k8s-56891": (None, "not stated"),
}


def gib(v):
    return "?" if v is None else "%.2f" % (v / 2**30)


def run(vramfit, text):
    p = subprocess.run([vramfit, "explain", "--json", "-"], input=text.encode(), capture_output=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stderr.decode(errors="replace").strip()}


def judge(row, j):
    check, _ = RESOLUTION[row["id"]]
    events = j.get("events") or []
    if not events:
        return "no", "no out-of-memory event: %s" % (
            "explained as a symptom" if j.get("symptoms") else "not found"
        )
    if check is None:
        return "n/a", "no fix stated"
    top = j.get("fixes", [])[:3]
    text = "\n".join("%s | %s" % (f["title"], f["command"]) for f in top)
    if check == "bigger":
        ok = j.get("bigger_card") is not None
        return ("yes", "") if ok else ("no", "no bigger card offered")
    ok = check(text) if callable(check) else re.search(check, text) is not None
    if ok:
        return "yes", ""
    return "no", "top 3: " + "; ".join(f["title"] for f in top)


def main(argv):
    # ../shared beside the repository root, as DESIGN.md lays it out
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(os.path.dirname(root), "shared", "reference", "oom-examples-public.jsonl")
    vramfit = "build/vramfit"
    md = "--markdown" in argv
    args = [a for a in argv if a != "--markdown"]
    if "--vramfit" in args:
        i = args.index("--vramfit")
        vramfit = args[i + 1]
        del args[i : i + 2]
    if args:
        path = args[0]
    rows = [json.loads(l) for l in open(path) if l.strip()]
    rows.sort(key=lambda r: r["id"])
    unknown = [r["id"] for r in rows if r["id"] not in RESOLUTION]
    if unknown:
        sys.exit("no resolution check for: " + ", ".join(unknown))
    score = {"tune": [0, 0], "report": [0, 0]}
    lines = []
    for i, row in enumerate(rows):
        half = "tune" if i % 2 == 0 else "report"
        j = run(vramfit, row["text"])
        ev = (j.get("events") or [None])[-1]
        hit, why = judge(row, j)
        if hit != "n/a":
            score[half][1] += 1
            score[half][0] += hit == "yes"
        cause = (j.get("diagnosis") or {}).get("cause") or "-"
        nums = "-" if not ev else "%s / %s / %s" % (
            gib(ev.get("requested_bytes")),
            gib(ev.get("free_bytes")),
            gib(ev.get("total_bytes")),
        )
        top = [f["title"] for f in (j.get("fixes") or [])[:3]]
        lines.append(
            (
                half,
                row["id"],
                "yes" if ev else "no",
                ev["tool"] if ev else "-",
                nums,
                cause,
                RESOLUTION[row["id"]][1],
                hit,
                why if hit == "no" else "; ".join(top) if hit == "yes" else "",
            )
        )
    if md:
        print("| half | id | found | tool | GiB asked / free / total | cause | resolution | top 3 | note |")
        print("|---|---|---|---|---|---|---|---|---|")
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        for l in lines:
            print("%-6s %-26s %-3s %-10s %-22s %-19s %-4s %s" % (l[0], l[1], l[2], l[3], l[4], l[5], l[7], l[8]))
    for half in ("tune", "report"):
        hit, n = score[half]
        print(
            "%s half: maintainers' fix in the top 3 for %d of %d scored examples (%.0f %%)"
            % (half, hit, n, 100.0 * hit / n if n else 0.0)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
