/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_patterns.c - the table of known out-of-memory messages (issue #5) and their parsers.
 *
 * How to add a row
 * ----------------
 *  1. Find the message in a public issue (or the source that prints it) and copy a few
 *     lines verbatim into tests/fixtures/oom/<name>.log, first line "# source: <URL>".
 *  2. Pick triggers: trig[0] is a literal substring (>= 4 bytes) every such line holds; it
 *     feeds the prefilter, so make it distinctive. trig[1], trig[2] narrow the row (AND).
 *  3. Place the row ABOVE any broader row that would also match (first match wins): e.g.
 *     "llama runner process has terminated" sits above "cudaMalloc failed".
 *  4. Set tool (what the user ran; "pytorch"/"unknown" get refined by hints in the log),
 *     source (the layer that printed it), backend (NULL: the parser decides).
 *  5. Write a parser when the line holds numbers: use vf__oom_bytes_after() (units parsed
 *     by vf_parse_bytes, exact to the byte) and return false if the line is not really it.
 *  6. Name the fixture in the row; tests/unit/t_oom.c walks the table and checks both ways,
 *     then add the key numbers of the fixture to the test's expectations.
 */
#include "oom.h"

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- helpers */

static bool has(const char *line, size_t len, const char *s)
{
    return vf__oom_find(line, len, s) != NULL;
}

static const char *after(const char *line, size_t len, const char *key)
{
    const char *p = vf__oom_find(line, len, key);
    return p ? p + strlen(key) : NULL;
}

/* "CUDA out of memory", "HIP out of memory", ... -> backend */
static const char *backend_word(const char *line, size_t len)
{
    if (has(line, len, "HIP out of memory"))
        return "rocm";
    if (has(line, len, "XPU out of memory") || has(line, len, "DPCPP out of memory"))
        return "xpu";
    if (has(line, len, "NPU out of memory"))
        return "npu";
    if (has(line, len, "MUSA out of memory"))
        return "musa";
    return "cuda";
}

static void torch_version_hint(struct vf__oom_m *m, const char *line, size_t len, bool old)
{
    if (has(line, len, "torch.OutOfMemoryError"))
        m->version_hint = "torch>=2.4 (torch.OutOfMemoryError)";
    else if (has(line, len, "torch.cuda.OutOfMemoryError"))
        m->version_hint = old ? "torch 1.13-2.0 (torch.cuda.OutOfMemoryError, old form)"
                              : "torch 2.1-2.3 (torch.cuda.OutOfMemoryError)";
    else if (old && has(line, len, "RuntimeError"))
        m->version_hint = "torch<=1.12 (RuntimeError)";
}

/* "Process 7478 has 4.08 GiB memory in use." (any number of them) */
static void torch_procs(struct vf__oom_m *m, const char *line, size_t len)
{
    const char *end = line + len, *p = line;
    while (m->ev.n_procs < VF_OOM_MAX_PROCS) {
        const char *q = vf__oom_find(p, (size_t)(end - p), "Process ");
        if (!q)
            break;
        const char *e;
        uint64_t pid = vf__oom_u64_at(q + 8, end, &e);
        p = q + 8;
        if (pid == VF_UNKNOWN || pid > UINT32_MAX || end - e < 5 || memcmp(e, " has ", 5))
            continue;
        uint64_t b = vf__oom_bytes_at(e + 5, end, 0, &e);
        m->ev.procs[m->ev.n_procs].pid = (uint32_t)pid;
        m->ev.procs[m->ev.n_procs].bytes = b;
        m->ev.n_procs++;
        p = e;
    }
}

/* The device memory used outside this PyTorch: total - free - reserved (other processes,
 * CUDA contexts, libraries that bypass the caching allocator). */
static void outside_pytorch(struct vf_oom_event *ev)
{
    if (ev->total_bytes == VF_UNKNOWN || ev->free_bytes == VF_UNKNOWN ||
        ev->reserved_bytes == VF_UNKNOWN)
        return;
    uint64_t used = ev->free_bytes <= ev->total_bytes ? ev->total_bytes - ev->free_bytes : 0;
    ev->outside_pytorch_bytes = used >= ev->reserved_bytes ? used - ev->reserved_bytes : 0;
}

/* ------------------------------------------------------------- parsers */

/* PyTorch 2.1+ sentence form (CUDA, HIP, XPU; "capacty" typo in 2.1). F-OOM-01 */
static bool p_torch2(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    struct vf_oom_event *ev = &m->ev;
    ev->requested_bytes = vf__oom_bytes_after(line, len, "Tried to allocate ", flags);
    const char *g = after(line, len, ". GPU ");
    if (g) {
        uint64_t d = vf__oom_u64_at(g, line + len, NULL);
        if (d < 4096)
            ev->device = (int)d;
    }
    ev->total_bytes = vf__oom_bytes_after(line, len, "total capacity of ", flags);
    if (ev->total_bytes == VF_UNKNOWN)
        ev->total_bytes = vf__oom_bytes_after(line, len, "total capacty of ", flags);
    ev->free_bytes = vf__oom_bytes_after(line, len, " of which ", flags);
    ev->allocated_bytes = vf__oom_bytes_after(line, len, "Of the allocated memory ", flags);
    const char *u = vf__oom_find(line, len, " is reserved by PyTorch but unallocated");
    if (u) {
        /* "..., and 194.87 MiB is reserved by PyTorch but unallocated" */
        const char *a = NULL;
        for (const char *q = line; q && q < u;) {
            q = vf__oom_find(q, (size_t)(u - q), "and ");
            if (q)
                a = q + 4, q += 4;
        }
        if (a)
            ev->reserved_unallocated_bytes = vf__oom_bytes_at(a, u, flags, NULL);
    }
    ev->reserved_bytes = vf__sat_add(ev->allocated_bytes, ev->reserved_unallocated_bytes);
    /* "... is free. 60.00 GiB allowed; Of the allocated memory ..." (a memory fraction) */
    const char *al = vf__oom_find(line, len, " allowed; ");
    if (al) {
        const char *b = al;
        while (b > line && !(b[-1] == ' ' && b - 1 > line && (b[-2] == '.' || b[-2] == ';')))
            b--;
        ev->allowed_bytes = vf__oom_bytes_at(b, al, flags, NULL);
    }
    /* "with 1.38 MiB allocated in private pools (e.g., CUDA Graphs)" */
    const char *pp = vf__oom_find(line, len, " allocated in private pools");
    const char *w = pp ? vf__oom_find(line, (size_t)(pp - line), ", with ") : NULL;
    if (w)
        ev->private_pool_bytes = vf__oom_bytes_at(w + 7, pp, flags, NULL);
    outside_pytorch(ev);
    uint64_t self = vf__oom_bytes_after(line, len, "this process has ", flags);
    if (self != VF_UNKNOWN && ev->reserved_bytes != VF_UNKNOWN && self >= ev->reserved_bytes)
        ev->non_pytorch_bytes = self - ev->reserved_bytes;
    torch_procs(m, line, len);
    ev->backend = backend_word(line, len);
    torch_version_hint(m, line, len, false);
    if (!m->version_hint && has(line, len, "total capacty"))
        m->version_hint = "torch 2.1 (\"capacty\")";
    return ev->requested_bytes != VF_UNKNOWN || ev->total_bytes != VF_UNKNOWN;
}

/* PyTorch 1.x parenthetical: "(GPU 0; T total capacity; A already allocated; F free;
 * [X allowed;] R reserved in total by PyTorch)" or "... R cached)". F-OOM-01 */
static bool p_torch1(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    struct vf_oom_event *ev = &m->ev;
    const char *end = line + len;
    ev->requested_bytes = vf__oom_bytes_after(line, len, "Tried to allocate ", flags);
    const char *g = vf__oom_find(line, len, " (GPU ");
    if (!g)
        g = vf__oom_find(line, len, " (NPU ");
    if (!g)
        return false;
    const char *e;
    uint64_t d = vf__oom_u64_at(g + 6, end, &e);
    if (d < 4096)
        ev->device = (int)d;
    uint64_t cached = VF_UNKNOWN;
    const char *close = memchr(g, ')', (size_t)(end - g));
    if (!close)
        close = end;
    /* segments "NUM UNIT label" separated by ';' */
    for (const char *s = memchr(g, ';', (size_t)(close - g)); s && s < close;) {
        const char *seg = s + 1;
        const char *next = memchr(seg, ';', (size_t)(close - seg));
        const char *segend = next ? next : close;
        uint64_t b = vf__oom_bytes_at(seg, segend, flags, &e);
        size_t n = (size_t)(segend - e);
        if (vf__oom_find(e, n, "total capacity"))
            ev->total_bytes = b;
        else if (vf__oom_find(e, n, "already allocated"))
            ev->allocated_bytes = b;
        else if (vf__oom_find(e, n, "reserved in total"))
            ev->reserved_bytes = b;
        else if (vf__oom_find(e, n, "cached"))
            cached = b;
        else if (vf__oom_find(e, n, "allowed"))
            ev->allowed_bytes = b;
        else if (vf__oom_find(e, n, "free"))
            ev->free_bytes = b;
        s = next;
    }
    /* 1.0-1.3 print "N cached": the free cache (reserved - allocated) when it is below what
     * is allocated - a reserved total can never be - else the reserved total */
    if (cached != VF_UNKNOWN && ev->allocated_bytes != VF_UNKNOWN && cached < ev->allocated_bytes)
        ev->reserved_bytes = vf__sat_add(ev->allocated_bytes, cached);
    else if (cached != VF_UNKNOWN)
        ev->reserved_bytes = cached;
    if (ev->reserved_bytes != VF_UNKNOWN && ev->allocated_bytes != VF_UNKNOWN &&
        ev->reserved_bytes >= ev->allocated_bytes)
        ev->reserved_unallocated_bytes = ev->reserved_bytes - ev->allocated_bytes;
    outside_pytorch(ev);
    ev->backend = backend_word(line, len);
    torch_version_hint(m, line, len, true);
    if (!m->version_hint && has(line, len, " cached)"))
        m->version_hint = "torch 1.0-1.3 (\"cached\")";
    return true;
}

/* "MPS backend out of memory (MPS allocated: A, other allocations: O, max allowed: M).
 * Tried to allocate R on private pool." F-OOM-01 */
static bool p_mps(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    struct vf_oom_event *ev = &m->ev;
    ev->allocated_bytes = vf__oom_bytes_after(line, len, "MPS allocated: ", flags);
    ev->non_pytorch_bytes = vf__oom_bytes_after(line, len, "other allocations: ", flags);
    ev->total_bytes = vf__oom_bytes_after(line, len, "max allowed: ", flags);
    ev->requested_bytes = vf__oom_bytes_after(line, len, "Tried to allocate ", flags);
    uint64_t used = vf__sat_add(ev->allocated_bytes, ev->non_pytorch_bytes);
    if (used != VF_UNKNOWN && ev->total_bytes != VF_UNKNOWN)
        ev->free_bytes = used <= ev->total_bytes ? ev->total_bytes - used : 0;
    return true;
}

/* "Allocation on device 0 would exceed allowed memory. (out of memory)" (often truncated
 * right after "device "); the figures follow on the next lines (see oom_parse.c). */
static bool p_async(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    const char *d = after(line, len, "Allocation on device ");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "DefaultCPUAllocator: can't allocate memory: you tried to allocate 67108864 bytes." */
static bool p_cpu_alloc(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    m->ev.requested_bytes = vf__oom_bytes_after(line, len, "you tried to allocate ", flags);
    return true;
}

/* "model requires more system memory (164.8 GiB) than is available (13.4 GiB)" */
static bool p_ollama_ram(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    m->ev.requested_bytes = vf__oom_bytes_after(line, len, "system memory (", flags);
    m->ev.free_bytes = vf__oom_bytes_after(line, len, "than is available (", flags);
    return true;
}

/* "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0:
 * cudaMalloc failed: out of memory" */
static bool p_ggml_cudamalloc(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    m->ev.requested_bytes = vf__oom_bytes_after(line, len, "allocating ", flags);
    const char *d = after(line, len, " on device ");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "failed to allocate CUDA0 buffer of size 151851674624" (bytes) */
static bool p_ggml_buffer(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    m->ev.requested_bytes = vf__oom_bytes_after(line, len, "buffer of size ", flags);
    const char *d = after(line, len, "allocate CUDA");
    if (!d)
        d = after(line, len, "allocate ROCm");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "CUDA error 2 at ggml-cuda.cu:359: out of memory" */
static bool p_ggml_old(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)m, (void)flags;
    return has(line, len, "out of memory");
}

/* "Error: llama runner process has terminated: ..." only when it says memory. */
static bool p_ollama_runner(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)m, (void)flags;
    return has(line, len, "out of memory") || has(line, len, "ALLOC_FAILED");
}

/* Ollama's scheduler (0.12+, llm/server.go): "memory layout cannot be allocated" when no
 * layout of the model, its context and graph fits what the GPUs and the host have free;
 * "with num_gpu = N" when the user fixed the layers on the GPU. No figures. */
static bool p_ollama_layout(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)m, (void)line, (void)len, (void)flags;
    return true;
}

/* "The model's max seq len (4096) is larger than the maximum number of tokens that can be
 * stored in KV cache (3664)." */
static bool p_vllm_seq(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    m->ctx_tokens = vf__oom_u64_after(line, len, "max seq len (");
    return true;
}

/* "To serve at least one request with the models's max seq len (12288), 1.69 GiB KV cache
 * is needed, which is larger than the available KV cache memory (0.87 GiB)." */
static bool p_vllm_kv(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    const char *p = after(line, len, "max seq len (");
    m->ctx_tokens = vf__oom_u64_after(line, len, "max seq len (");
    if (p) {
        const char *q = memchr(p, ',', (size_t)(line + len - p));
        if (q)
            m->ev.requested_bytes = vf__oom_bytes_at(q + 1, line + len, flags, NULL);
    }
    m->ev.free_bytes = vf__oom_bytes_after(line, len, "available KV cache memory (", flags);
    return true;
}

/* "Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory
 * utilization (0.95, 45.01 GiB)." (newer: "device cuda:0 (...)") */
static bool p_vllm_free(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    const char *end = line + len;
    const char *p = after(line, len, "Free memory on device ");
    if (!p)
        return false;
    if (end - p >= 5 && !memcmp(p, "cuda:", 5)) {
        uint64_t d = vf__oom_u64_at(p + 5, end, NULL);
        if (d < 4096)
            m->ev.device = (int)d;
    }
    const char *o = memchr(p, '(', (size_t)(end - p));
    const char *sl = o ? memchr(o, '/', (size_t)(end - o)) : NULL;
    if (o && sl) {
        /* "31.44/47.38 GiB": the unit is written once, after the total */
        const char *e;
        uint64_t total = vf__oom_bytes_at(sl + 1, end, flags, &e);
        m->ev.total_bytes = total;
        char buf[VF_MAX_NUMBER_TEXT + 8];
        size_t n = (size_t)(sl - (o + 1));
        const char *unit = sl + 1;
        while (unit < e && ((*unit >= '0' && *unit <= '9') || *unit == '.'))
            unit++;
        size_t un = (size_t)(e - unit);
        if (n + un < sizeof buf) {
            memcpy(buf, o + 1, n);
            memcpy(buf + n, unit, un);
            buf[n + un] = 0;
            uint64_t f;
            if (!vf_parse_bytes(buf, &f, NULL))
                m->ev.free_bytes = f;
        }
    }
    const char *u = after(line, len, "GPU memory utilization (");
    if (u) {
        const char *c = memchr(u, ',', (size_t)(end - u));
        if (c) {
            char buf[32];
            size_t n = (size_t)(c - u);
            if (n < sizeof buf) {
                memcpy(buf, u, n);
                buf[n] = 0;
                char *x;
                double d = strtod(buf, &x);
                if (x != buf && d > 0 && d <= 1)
                    m->utilization = d;
            }
            m->ev.requested_bytes = vf__oom_bytes_at(c + 1, end, flags, NULL);
        }
    }
    return true;
}

/* "CUDA out of memory occurred when warming up sampler with 1024 dummy requests." */
static bool p_vllm_sampler(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    m->batch = vf__oom_u64_after(line, len, "sampler with ");
    return true;
}

/* "OOM when allocating tensor with shape[100,4096,32] and type float on ...GPU:0" */
/* TensorFlow's dtype names and their bytes per element. */
static const struct {
    const char *name;
    unsigned bytes;
} tf_types[] = {{"float ", 4}, {"double ", 8}, {"half ", 2},     {"bfloat16 ", 2},
                {"int64 ", 8}, {"int32 ", 4},  {"int16 ", 2},    {"int8 ", 1},
                {"uint8 ", 1}, {"bool ", 1},   {"complex64 ", 8}};

/* "shape[100,4096,32] and type float" (older TF 1.x: "of shape [563354,256] and type
 * float"): the tensor's bytes, VF_UNKNOWN if not said. */
static uint64_t tf_tensor_bytes(const char *line, size_t len)
{
    const char *end = line + len, *p = after(line, len, "shape[");
    if (!p)
        p = after(line, len, "shape [");
    const char *t = after(line, len, " and type ");
    if (!p || !t)
        return VF_UNKNOWN;
    uint64_t n = 1;
    for (;;) {
        const char *e;
        uint64_t d = vf__oom_u64_at(p, end, &e);
        if (d == VF_UNKNOWN || e >= end || !vf__mul_u64(n, d, &n))
            return VF_UNKNOWN;
        if (*e == ']')
            break;
        if (*e != ',')
            return VF_UNKNOWN;
        p = e + 1;
    }
    for (size_t i = 0; i < sizeof tf_types / sizeof tf_types[0]; i++) {
        size_t k = strlen(tf_types[i].name);
        if ((size_t)(end - t) >= k && !memcmp(t, tf_types[i].name, k))
            return vf__mul_u64(n, tf_types[i].bytes, &n) ? n : VF_UNKNOWN;
    }
    return VF_UNKNOWN;
}

static bool p_tf_tensor(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    m->ev.requested_bytes = tf_tensor_bytes(line, len);
    const char *d = after(line, len, "device:GPU:");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.02GiB" */
static bool p_tf_bfc(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    if (has(line, len, "this is not a failure"))
        return false; /* TF 2's warning: it retries with less memory, nothing failed */
    m->ev.requested_bytes = vf__oom_bytes_after(line, len, "trying to allocate ", flags);
    const char *d = after(line, len, "(GPU_");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "failed to allocate 2.46G (2637627392 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY" */
static bool p_tf_driver(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    const char *p = after(line, len, "failed to allocate ");
    if (p) {
        const char *o = memchr(p, '(', (size_t)(line + len - p));
        m->ev.requested_bytes = o ? vf__oom_bytes_at(o + 1, line + len, flags, NULL)
                                  : vf__oom_bytes_at(p, line + len, flags, NULL);
    }
    return true;
}

/* "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes." and the
 * "Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0" form. */
static bool p_xla(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    const char *p = after(line, len, "trying to allocate ");
    if (!p)
        p = after(line, len, "Out of memory allocating ");
    if (p) {
        m->ev.requested_bytes = vf__oom_bytes_at(p, line + len, flags, NULL);
        return true;
    }
    p = after(line, len, "allocate request for ");
    if (p) {
        const char *o = memchr(p, '(', (size_t)(line + len - p));
        m->ev.requested_bytes = vf__oom_bytes_at(o ? o + 1 : p, line + len, flags, NULL);
        const char *d = after(line, len, "device ordinal ");
        if (d) {
            uint64_t v = vf__oom_u64_at(d, line + len, NULL);
            if (v < 4096)
                m->ev.device = (int)v;
        }
        return true;
    }
    return has(line, len, "Out of memory") || has(line, len, "out of memory");
}

/* "CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ;" (CNTK) */
static bool p_cntk(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    const char *d = after(line, len, "GPU=");
    if (d) {
        uint64_t v = vf__oom_u64_at(d, line + len, NULL);
        if (v < 4096)
            m->ev.device = (int)v;
    }
    return true;
}

/* "Out of memory: Killed process 410126 (python) total-vm:..., anon-rss:22957108kB, ..."
 * and "Killed process 28438 (java) ..." and "Kill process 24572 (java) score 0 ...". */
static bool p_kernel_kill(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    uint64_t pid = vf__oom_u64_after(line, len, "Killed process ");
    if (pid == VF_UNKNOWN)
        pid = vf__oom_u64_after(line, len, "Kill process ");
    if (pid == VF_UNKNOWN)
        pid = vf__oom_u64_after(line, len, "reaped process ");
    uint64_t rss = vf__oom_u64_after(line, len, "anon-rss:");
    uint64_t shm = vf__oom_u64_after(line, len, "shmem-rss:");
    uint64_t file = vf__oom_u64_after(line, len, "file-rss:");
    /* kB -> bytes; anon + file + shmem is the resident set the kernel freed */
    uint64_t kb =
        vf__sat_add(rss, vf__sat_add(file == VF_UNKNOWN ? 0 : file, shm == VF_UNKNOWN ? 0 : shm));
    if (pid != VF_UNKNOWN && pid <= UINT32_MAX && m->ev.n_procs < VF_OOM_MAX_PROCS) {
        m->ev.procs[m->ev.n_procs].pid = (uint32_t)pid;
        m->ev.procs[m->ev.n_procs].bytes = vf__sat_mul(kb, 1024);
        if (has(line, len, "reaped process"))
            m->ev.procs[m->ev.n_procs].bytes = VF_UNKNOWN; /* rss is 0 after the reap */
        m->ev.n_procs++;
    }
    return true;
}

/* bash: "line 6:  3305 Killed    cmd", or a bare "Killed" line. */
static bool p_shell_killed(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    const char *k = vf__oom_find(line, len, "Killed");
    const char *end = line + len;
    const char *a = k + 6;
    if (a < end && *a != ' ' && *a != '\t')
        return false;
    const char *b = k;
    while (b > line && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    if (b == line)
        return true; /* "Killed" alone (or "Killed  cmd") */
    const char *d = b;
    while (d > line && d[-1] >= '0' && d[-1] <= '9')
        d--;
    if (d == b || (d > line && d[-1] != ' ' && d[-1] != '\t'))
        return false;
    uint64_t pid = vf__oom_u64_at(d, b, NULL);
    if (pid != VF_UNKNOWN && pid <= UINT32_MAX) {
        m->ev.procs[0].pid = (uint32_t)pid;
        m->ev.procs[0].bytes = VF_UNKNOWN;
        m->ev.n_procs = 1;
    }
    return true;
}

/* "out of resource: shared memory, Required: 98304, Hardware limit: 65536" - bytes of
 * on-chip shared memory per block, NOT VRAM. requested/total carry those two numbers. */
static bool p_triton(struct vf__oom_m *m, const char *line, size_t len, unsigned flags)
{
    (void)flags;
    m->ev.requested_bytes = vf__oom_u64_after(line, len, "Required: ");
    m->ev.total_bytes = vf__oom_u64_after(line, len, "Hardware limit: ");
    return true;
}

/* ---------------------------------------------------------------- table */

#define T1(a)         \
    {                 \
        a, NULL, NULL \
    }
#define T2(a, b)   \
    {              \
        a, b, NULL \
    }
#define T3(a, b, c) \
    {               \
        a, b, c     \
    }

/* First match wins: specific rows above broad ones. merge_lines: see oom.h. */
const struct vf__oom_row vf__oom_rows[] = {
    /* not VRAM: Triton kernel shared memory (per-SM), say so in the diagnosis */
    {"triton-shared-memory", T1("out of resource: shared memory"), "pytorch", "triton", "cuda", 0,
     4, p_triton, "triton-shared-memory.log"},
    {"triton-init-handles", T2("triton/compiler/compiler.py", "_init_handles"), "pytorch", "triton",
     "cuda", VF__OOM_WEAK, 4, NULL, "triton-init-handles.log"},
    /* host RAM: the Linux kernel and shells */
    {"linux-cgroup-oom", T1("Memory cgroup out of memory"), "unknown", "linux", "cpu", 0, 64,
     p_kernel_kill, "linux-cgroup-oom.log"},
    {"linux-oom-kill", T1("Out of memory: Kill"), "unknown", "linux", "cpu", 0, 64, p_kernel_kill,
     "linux-oom-kill.log"},
    {"linux-oom-invoked", T1("invoked oom-killer"), "unknown", "linux", "cpu", 0, 64, NULL,
     "linux-oom-invoked.log"},
    {"linux-killed-process", T2("Killed process ", "kB"), "unknown", "linux", "cpu", VF__OOM_WEAK,
     64, p_kernel_kill, "linux-killed-process.log"},
    {"linux-oom-reaper", T1("oom_reaper: reaped process"), "unknown", "linux", "cpu", VF__OOM_WEAK,
     64, p_kernel_kill, "linux-oom-reaper.log"},
    {"shell-killed", T1("Killed"), "unknown", "linux", "cpu", VF__OOM_WEAK, 4, p_shell_killed,
     "shell-killed.log"},
    /* host RAM: user space */
    {"pytorch-cpu-allocator", T1("DefaultCPUAllocator"), "pytorch", "pytorch", "cpu", 0, 4,
     p_cpu_alloc, "pytorch-cpu-allocator.log"},
    {"ollama-system-memory", T1("model requires more system memory"), "ollama", "ollama", "cpu", 0,
     4, p_ollama_ram, "ollama-system-memory.log"},
    /* vLLM (before the PyTorch rows: the sampler message says "CUDA out of memory") */
    {"vllm-sampler-warmup", T1("when warming up sampler"), "vllm", "vllm", "cuda", 0, 8,
     p_vllm_sampler, "vllm-sampler-warmup.log"},
    {"vllm-no-cache-blocks", T1("No available memory for the cache blocks"), "vllm", "vllm", "cuda",
     0, 4, NULL, "vllm-no-cache-blocks.log"},
    {"vllm-max-seq-len", T1("maximum number of tokens that can be stored in KV cache"), "vllm",
     "vllm", "cuda", 0, 4, p_vllm_seq, "vllm-max-seq-len.log"},
    {"vllm-v1-kv-cache", T1("which is larger than the available KV cache memory"), "vllm", "vllm",
     "cuda", 0, 4, p_vllm_kv, "vllm-v1-kv-cache.log"},
    {"vllm-free-memory", T1("on startup is less than desired GPU memory utilization"), "vllm",
     "vllm", "cuda", 0, 4, p_vllm_free, "vllm-free-memory.log"},
    /* PyTorch caching allocator, newest first */
    {"pytorch-2.1-capacty", T2("out of memory. Tried to allocate", "total capacty of"), "pytorch",
     "pytorch", NULL, 0, 4, p_torch2, "pytorch-2.1-capacty.log"},
    {"pytorch-2.2", T2("out of memory. Tried to allocate", "has a total capacity of"), "pytorch",
     "pytorch", NULL, 0, 4, p_torch2, "pytorch-2.2.log"},
    {"pytorch-1.10-max-split",
     T3("out of memory. Tried to allocate", " (GPU ", "max_split_size_mb"), "pytorch", "pytorch",
     NULL, 0, 4, p_torch1, "pytorch-1.10-max-split.log"},
    {"pytorch-1.x-cached", T3("out of memory. Tried to allocate", " (GPU ", " cached)"), "pytorch",
     "pytorch", NULL, 0, 4, p_torch1, "pytorch-1.x-cached.log"},
    {"pytorch-1.x", T2("out of memory. Tried to allocate", "total capacity;"), "pytorch", "pytorch",
     NULL, 0, 4, p_torch1, "pytorch-1.x.log"},
    /* the first line of any of them alone (a paste cut short): the request is on it. A
     * wrapped message is joined (oom_parse.c) and matches its full row above. */
    {"pytorch-first-line", T1("CUDA out of memory. Tried to allocate"), "pytorch", "pytorch", NULL,
     0, 4, p_torch2, "pytorch-first-line.log"},
    {"pytorch-mps", T1("MPS backend out of memory"), "pytorch", "pytorch", "mps", VF__OOM_MB_BINARY,
     4, p_mps, "pytorch-mps.log"},
    {"pytorch-cuda-malloc-async", T1("Allocation on device"), "pytorch", "pytorch", "cuda", 0, 8,
     p_async, "pytorch-cuda-malloc-async.log"},
    {"comfyui-got-oom", T1("Got an OOM, unloading all loaded models"), "comfyui", "pytorch", "cuda",
     VF__OOM_WEAK, 8, NULL, "comfyui-got-oom.log"},
    /* Ollama runner (above the ggml rows it quotes) */
    {"ollama-runner-terminated", T1("llama runner process has terminated"), "ollama", "ggml-cuda",
     "cuda", 0, 4, p_ollama_runner, "ollama-runner-terminated.log"},
    {"ollama-memory-layout", T1("memory layout cannot be allocated"), "ollama", "ollama", "cuda", 0,
     4, p_ollama_layout, "ollama-memory-layout.log"},
    /* llama.cpp / ggml */
    {"llamacpp-cudamalloc", T1("cudaMalloc failed: out of memory"), "llamacpp", "ggml-cuda", "cuda",
     0, 4, p_ggml_cudamalloc, "llamacpp-cudamalloc.log"},
    {"llamacpp-gallocr", T2("ggml_gallocr_reserve_n", "failed to allocate"), "llamacpp",
     "ggml-cuda", "cuda", 0, 4, p_ggml_buffer, "llamacpp-gallocr.log"},
    {"llamacpp-alloc-buffer", T2("failed to allocate ", " buffer of size "), "llamacpp",
     "ggml-cuda", "cuda", 0, 4, p_ggml_buffer, "llamacpp-alloc-buffer.log"},
    {"llamacpp-compute-buffers", T1("failed to allocate compute buffers"), "llamacpp", "ggml-cuda",
     "cuda", VF__OOM_WEAK, 4, NULL, "llamacpp-compute-buffers.log"},
    {"llamacpp-unable-allocate", T1("unable to allocate CUDA"), "llamacpp", "ggml-cuda", "cuda",
     VF__OOM_WEAK, 4, NULL, "llamacpp-unable-allocate.log"},
    {"llamacpp-fit-params", T1("trying to fit params to free device memory"), "llamacpp",
     "ggml-cuda", "cuda", 0, 4, NULL, "llamacpp-fit-params.log"},
    {"llamacpp-kv-buffer", T1("failed to allocate buffer for kv cache"), "llamacpp", "ggml-cuda",
     "cuda", VF__OOM_WEAK, 4, NULL, "llamacpp-kv-buffer.log"},
    {"llamacpp-create-context", T1("failed to create context with model"), "llamacpp", "ggml-cuda",
     "cuda", VF__OOM_WEAK, 4, NULL, "llamacpp-create-context.log"},
    {"llamacpp-old-cuda-error", T1("at ggml-cuda.cu:"), "llamacpp", "ggml-cuda", "cuda", 0, 4,
     p_ggml_old, "llamacpp-old-cuda-error.log"},
    /* libraries inside the GPU process */
    {"cntk-cublas", T2("CUBLAS failure ", "CUBLAS_STATUS_ALLOC_FAILED"), "cntk", "cublas", "cuda",
     0, 4, p_cntk, "cntk-cublas.log"},
    {"tf-cublas-handle", T2("failed to create cublas handle", "ALLOC_FAILED"), "tensorflow",
     "cublas", "cuda", 0, 4, NULL, "tf-cublas-handle.log"},
    {"cublas-alloc-failed", T1("CUBLAS_STATUS_ALLOC_FAILED"), "pytorch", "cublas", "cuda", 0, 4,
     NULL, "cublas-alloc-failed.log"},
    {"cudnn-alloc-failed", T1("CUDNN_STATUS_ALLOC_FAILED"), "pytorch", "cudnn", "cuda", 0, 4, NULL,
     "cudnn-alloc-failed.log"},
    {"nccl-cuda-oom", T2("NCCL WARN Cuda failure", "out of memory"), "pytorch", "nccl", "cuda", 0,
     8, NULL, "nccl-cuda-oom.log"},
    {"bnb-dispatch-cpu", T1("Some modules are dispatched on the CPU or the disk"), "transformers",
     "bitsandbytes", "cuda", 0, 4, NULL, "bnb-dispatch-cpu.log"},
    /* TensorFlow */
    {"tf-oom-tensor", T1("OOM when allocating tensor"), "tensorflow", "tensorflow", "cuda", 0, 8,
     p_tf_tensor, "tf-oom-tensor.log"},
    /* its allocator dump (bins, chunks, "Stats:") runs hundreds of lines before the op's own
     * "OOM when allocating tensor" line: one failure */
    {"tf-bfc-ran-out", T1("ran out of memory trying to allocate"), "tensorflow", "tensorflow",
     "cuda", 0, 65535, p_tf_bfc, "tf-bfc-ran-out.log"},
    {"tf-cuda-driver", T1("CUDA_ERROR_OUT_OF_MEMORY"), "tensorflow", "cuda", "cuda", 0, 4,
     p_tf_driver, "tf-cuda-driver.log"},
    /* JAX / XLA */
    {"xla-resource-exhausted", T1("RESOURCE_EXHAUSTED"), "jax", "xla", "cuda", 0, 12, p_xla,
     "xla-resource-exhausted.log"},
    {"xla-resource-exhausted-old", T2("Resource exhausted: Out of memory", "allocate"), "jax",
     "xla", "cuda", 0, 12, p_xla, "xla-resource-exhausted-old.log"},
    /* CUDA runtime errors with no figures (last: the broadest) */
    {"torch-accelerator-error", T1("AcceleratorError: CUDA error: out of memory"), "pytorch",
     "cuda", "cuda", 0, 4, NULL, "torch-accelerator-error.log"},
    {"cuda-error-oom", T1("CUDA error: out of memory"), "pytorch", "cuda", "cuda", VF__OOM_WEAK, 4,
     NULL, "cuda-error-oom.log"},
};
const size_t vf__oom_n_rows = sizeof vf__oom_rows / sizeof vf__oom_rows[0];
