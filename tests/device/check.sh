#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check.sh [VRAMFIT] - on a machine with an NVIDIA GPU: `vramfit smi --json` against
# nvidia-smi at the same moment, with a process holding a known allocation (1 GiB through the
# CUDA driver API, from python3 + ctypes: no toolkit needed). Prints one JSON report: per GPU
# the memory both tools see, the holder's PID and memory in both, and pass/fail per check.
# Builds vramfit first when the binary is missing. Exit 0 when every check passes.
set -u
bin=${1:-build/vramfit}
[ -x "$bin" ] || make -s "$bin" >/dev/null 2>&1 || { echo '{"error":"cannot build vramfit"}'; exit 1; }
command -v nvidia-smi >/dev/null 2>&1 || { echo '{"error":"nvidia-smi not found: no NVIDIA driver"}'; exit 1; }
tmp=$(mktemp -d)
trap 'kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
holder=
python3 - >"$tmp/holder.log" 2>&1 <<'PY' &
import ctypes, time, sys
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0, "cuInit"
dev = ctypes.c_int(); assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p(); assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
ptr = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 30)) == 0
print("holding", flush=True)
time.sleep(60)
PY
holder=$!
i=0
while ! grep -q holding "$tmp/holder.log" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$bin" smi --json >"$tmp/smi.json" 2>"$tmp/smi.err"
# vramfit run on a second holder of a known size: its measured peak vs the allocation
cat >"$tmp/alloc.py" <<'PY2'
import ctypes, time
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
p = ctypes.c_uint64(); assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(2 << 30)) == 0
time.sleep(1.0)
PY2
"$bin" run --report "$tmp/run.json" --plot "$tmp/run.svg" -- python3 "$tmp/alloc.py" >/dev/null 2>&1
nvidia-smi --query-gpu=index,uuid,memory.used,memory.total,memory.reserved --format=csv,noheader,nounits >"$tmp/gpu.csv" 2>/dev/null ||
    nvidia-smi --query-gpu=index,uuid,memory.used,memory.total --format=csv,noheader,nounits >"$tmp/gpu.csv"
nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv,noheader,nounits >"$tmp/apps.csv"
python3 - "$tmp" "$holder" <<'PY'
import json, sys, os
tmp, holder = sys.argv[1], int(sys.argv[2])
out = {"holder_pid": holder, "holder_log": open(tmp + "/holder.log").read().strip(), "checks": []}
def check(name, ok, detail):
    out["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
try:
    smi = json.load(open(tmp + "/smi.json"))
except Exception as e:
    smi = None
    check("vramfit smi --json parses", False, open(tmp + "/smi.err").read() + str(e))
gpus = [l.split(", ") for l in open(tmp + "/gpu.csv").read().strip().splitlines()]
apps = [l.split(", ") for l in open(tmp + "/apps.csv").read().strip().splitlines() if l.strip()]
out["nvidia_smi"] = {"gpus": gpus, "apps": apps}
if smi:
    out["vramfit"] = smi
    check("same number of GPUs", len(smi["gpus"]) == len(gpus), [len(smi["gpus"]), len(gpus)])
    for g, row in zip(smi["gpus"], gpus):
        used_mib = g["used_bytes"] / 2**20
        total_mib = g["total_bytes"] / 2**20
        check("GPU %s total within 1 MiB" % row[0], abs(total_mib - float(row[3])) <= 1, [total_mib, row[3]])
        check("GPU %s used within 64 MiB (sampled apart)" % row[0], abs(used_mib - float(row[2])) <= 64, [used_mib, row[2]])
        if len(row) > 4 and row[4] not in ("[N/A]", ""):
            check("GPU %s reserved within 1 MiB" % row[0], g["reserved_bytes"] is not None and abs(g["reserved_bytes"] / 2**20 - float(row[4])) <= 1, [g["reserved_bytes"], row[4]])
    procs = {p["pid"]: p for g in smi["gpus"] for p in g["processes"]}
    napps = {int(a[0]): float(a[1]) for a in apps}
    check("vramfit lists every nvidia-smi compute process", set(napps) <= set(procs), [sorted(napps), sorted(procs)])
    h = procs.get(holder)
    check("the 1 GiB holder is listed", h is not None, holder)
    if h and holder in napps:
        check("the holder's memory matches nvidia-smi within 2 MiB", abs(h["used_bytes"] / 2**20 - napps[holder]) <= 2, [h["used_bytes"], napps[holder]])
        check("the holder holds at least 1 GiB", h["used_bytes"] >= 2**30, h["used_bytes"])
        check("the holder is named python3", (h.get("name") or "").startswith("python"), h.get("name"))
try:
    run = json.load(open(tmp + "/run.json"))
    out["vramfit_run"] = run
    peak = run["peak_tree_bytes"]
    check("vramfit run: peak >= the 2 GiB allocation", peak >= 2 << 30, peak)
    check("vramfit run: peak - 2 GiB (the CUDA context) under 1 GiB", peak - (2 << 30) < 1 << 30, peak - (2 << 30))
    check("vramfit run: exit status 0", run["exit_status"] == 0, run["exit_status"])
except Exception as e:
    check("vramfit run report", False, str(e))
out["passed"] = all(c["ok"] for c in out["checks"])
print(json.dumps(out, indent=2))
sys.exit(0 if out["passed"] else 1)
PY
