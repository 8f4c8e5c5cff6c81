#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mkseeds.py - writes the seed corpora of the fuzz targets added in issue 17
(tests/fuzz/corpus/{units,options,http,hub,nvml,amdgpu,procscan}/) from the test fixtures:
the golden tests' command lines, the HTTP fixture body, an OOM log, the safetensors fixture,
the sysroot trees. Run from the repository root; the files are committed (a few KiB each)."""
import glob
import os
import shlex
import struct

RS = b"\x1e"
OUT = "tests/fuzz/corpus"


def put(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def read(path):
    with open(path, "rb") as f:
        return f.read()


def golden_options():
    """(command, [(name, value|None)]) of each golden estimate/pick/explain test."""
    out = []
    for path in sorted(glob.glob("tests/golden/*.test")):
        for line in open(path, encoding="utf-8"):
            if not line.startswith("#! args:"):
                continue
            try:
                argv = shlex.split(line[len("#! args:"):])
            except ValueError:
                continue
            if not argv or argv[0] not in ("estimate", "pick", "explain"):
                continue
            opts, i = [], 1
            while i < len(argv):
                a = argv[i]
                if a.startswith("-") and len(a) > 1:
                    if "=" in a:
                        opts.append(tuple(a.split("=", 1)))
                    elif i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                        opts.append((a, argv[i + 1]))
                        i += 1
                    else:
                        opts.append((a, None))
                elif argv[0] != "explain":
                    opts.append(("model", a))
                i += 1
            out.append((argv[0], opts))
    return out


def units():
    for i, s in enumerate(["24GiB", "24G", "24GB", "24576MiB", "23.65 GiB", "1024", "512KiB",
                           "1.5TB", "32k", "128K", "1M", "131072", "0.59", "2.000001", "4",
                           "Q4_K_M", "q8_0", "fp8", "nvfp4", "18446744073709551615"]):
        put("units", "seed%02d" % i, s)


def options(golden):
    code = {"estimate": 0, "pick": 1, "explain": 2}
    seen = set()
    for cmd, opts in golden:
        lines = "\n".join(n if v is None else "%s=%s" % (n, v) for n, v in opts)
        data = bytes([code[cmd]]) + lines.encode()
        if data in seen or len(seen) >= 40:
            continue
        seen.add(data)
        put("options", "golden%02d" % len(seen), data)


def http(golden):
    host = "127.0.0.1:8077"
    def req(method, url, args, body=b"", origin="", site=""):
        head = "%s\n%s\n%s\n%s\n%s\n" % (method, url, host, origin, site)
        q = "".join("%s=%s\n" % kv for kv in args)
        return head.encode() + q.encode() + b"\n" + body
    put("http", "estimate-get", req("GET", "/api/v1/estimate",
                                    [("model", "llama-3.1-8b"), ("ctx", "32k"), ("gpu", "rtx-4090")]))
    put("http", "estimate-post", req("POST", "/api/v1/estimate", [],
                                     read("tests/fixtures/http/estimate-body.json")))
    put("http", "pick-vllm", req("GET", "/api/v1/pick", [("model", "qwen3-32b"), ("engine", "vllm"),
                                                         ("max_model_len", "8192")]))
    put("http", "explain", req("POST", "/api/v1/explain", [("tool", "vllm")],
                               read("tests/fixtures/oom/pytorch-2.2.log")))
    put("http", "models", req("GET", "/api/v1/models", [("search", "llama")]))
    put("http", "gpus", req("GET", "/api/v1/gpus", []))
    put("http", "inspect", req("GET", "/api/v1/inspect", [("model", "flux1-dev")]))
    put("http", "version", req("GET", "/api/v1/version", []))
    put("http", "smi", req("GET", "/api/v1/smi", []))
    put("http", "metrics", req("GET", "/metrics", []))
    put("http", "page", req("GET", "/", []))
    put("http", "cors", req("OPTIONS", "/api/v1/estimate", [], b"", "http://app.example"))
    put("http", "cross-site", req("GET", "/api/v1/smi", [], b"", "http://evil.example", "cross-site"))
    n = 0
    for cmd, opts in golden:
        if cmd == "explain" or n >= 12:
            continue
        args = [(k.lstrip("-"), v if v is not None else "true") for k, v in opts]
        put("http", "golden%02d" % n, req("GET", "/api/v1/" + cmd, args))
        n += 1


def hub():
    ok = b"HTTP/1.1 200 OK\r\n"
    listing = (b'[{"type":"file","path":"config.json","size":357},'
               b'{"type":"directory","path":"sub"},'
               b'{"type":"file","path":"model.safetensors","size":43312}]')
    page2 = b'[{"type":"file","path":"sub/a.gguf","size":1}]'
    link = b'Link: <http://hub.test/api/models/org/model/tree/main?cursor=2>; rel="next"\r\n'
    put("hub", "list", b"\x00" + ok + b"Content-Type: application/json\r\n" + link + b"\r\n" +
        listing + RS + ok + b"\r\n" + page2)
    put("hub", "list-404", b"\x00HTTP/1.1 404 Not Found\r\nX-Error-Code: RepoNotFound\r\n\r\n{}")
    put("hub", "get", b"\x01" + ok + b"\r\n" + read("tests/fixtures/models/tiny-st/config.json"))
    put("hub", "get-gated", b"\x05HTTP/1.1 401 Unauthorized\r\nX-Error-Code: GatedRepo\r\n\r\n")
    put("hub", "get-redirect", b"\x01HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n" + RS + ok +
        b"\r\n{}")
    st = read("tests/fixtures/models/tiny-st/model.safetensors")
    hlen = struct.unpack("<Q", st[:8])[0]
    head = st[:8 + hlen]
    total = len(st)
    put("hub", "range", b"\x02HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-%d/%d\r\n\r\n"
        % (len(head) - 1, total) + head)
    put("hub", "range-whole", b"\x02" + ok + b"\r\n" + head)
    put("hub", "range-416", b"\x02HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\n\r\n")


def nvml():
    def s(text, ret=0):
        return bytes([ret, len(text)]) + text
    def procs(entries, gi=0xFFFFFFFF):
        raw = b"".join(struct.pack("<IIQII", pid, 0, used, gi, 0xFFFFFFFF) for pid, used in entries)
        return bytes([len(entries), 0]) + bytes([len(entries), 0]) + raw + bytes([len(entries)])
    one = (b"\x00" + b"\x01\x00" + b"\x00" + s(b"NVIDIA GeForce RTX 4090\x00") +
           s(b"GPU-1b6a52a5-0b47-40f2-9dfa-1c1b8a0a2f65\x00") +
           struct.pack("<QQQQ", 25757220864, 440401920, 14000000000, 11316817920) + b"\x00" +
           struct.pack("<II", 97, 40) + b"\x00" +
           procs([(4242, 8 << 30), (777, 1 << 30)]) + procs([(777, 900 << 20)]) + b"\x00\x00" +
           b"\x00\x00")
    put("nvml", "one-gpu", one)
    mig = (b"\x00" + b"\x01\x00" + b"\x00" + s(b"NVIDIA A100-SXM4-80GB\x00") + s(b"GPU-a\x00") +
           struct.pack("<QQQQ", 85899345920, 0, 80000000000, 5899345920) + b"\x00" +
           struct.pack("<II", 0, 0) + b"\x00" + procs([(10, 1 << 30)], 1) + b"\x00\x00\x00\x00" +
           b"\x01\x00" + b"\x02\x00" + b"\x00" + s(b"MIG 3g.40gb\x00") + s(b"MIG-x\x00") +
           struct.pack("<QQQQ", 42949672960, 0, 40000000000, 2949672960) + b"\x00" +
           struct.pack("<I", 1) + b"\x00")
    put("nvml", "mig", mig)
    put("nvml", "uma", b"\x00\x01\x00\x00" + s(b"NVIDIA GB10\x00") + s(b"\x00") + bytes(33) + b"\xd0")


def sysroot():
    root = "tests/fixtures/sysroot/amd/"
    dev = root + "sys/class/drm/card0/device/"
    files = [dev + f for f in ("vendor", "mem_info_vram_total", "mem_info_vram_used",
                                "gpu_busy_percent", "product_name", "uevent")]
    files += [root + "proc/555/fdinfo/7", root + "proc/555/fdinfo/9", root + "proc/555/comm"]
    put("amdgpu", "fixture", RS.join(read(f) for f in files))
    put("amdgpu", "one-client", RS.join(read(f) for f in files[:6]) + RS + read(root + "proc/556/fdinfo/4"))
    for pid in ("99", "777", "4242", "12"):
        base = "tests/fixtures/sysroot/container/proc/%s/" % pid
        link = os.readlink(base + "fd/" + os.listdir(base + "fd")[0]).encode()
        parts = [read(base + "comm"), read(base + "cmdline").rstrip(b"\x00"), read(base + "cgroup"), link]
        put("procscan", "container-" + pid, b"\x01" + RS.join(parts))
        put("procscan", "lost-" + pid, b"\x04" + RS.join(parts))


def main():
    golden = golden_options()
    units()
    options(golden)
    http(golden)
    hub()
    nvml()
    sysroot()


if __name__ == "__main__":
    main()
