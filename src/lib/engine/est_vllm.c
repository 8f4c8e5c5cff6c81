/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_vllm.c - what vLLM (`vllm serve`) allocates on each GPU at startup and what it prints:
 * the weights, the profiled activation peak, the non-torch memory, the KV cache that fills the
 * rest of gpu_memory_utilization x the card (rounded down to whole blocks, hybrid
 * sliding-window groups as vLLM's hybrid allocator pages them), and the CUDA graphs captured
 * after it. The release picks the rules (F-VLLM-13, vllm_rules): V0 (0.5.0-0.7.x), V1 before
 * 0.11, V1 0.11+ (the default, 0.11.0). The engine's start-up check is the verdict: where vLLM
 * raises, the workload does not fit (F-VLLM-12). Formulas F-VLLM-01..13 in docs/FORMULAS.md.
 *
 * vLLM 0.11.0 sources this models (read at the tag, not copied): vllm/v1/worker/gpu_worker.py
 * (init_device: requested_memory = total x utilization; determine_available_memory: available
 * KV = requested - (weights + torch peak increase + non-torch increase), or
 * --kv-cache-memory), vllm/v1/core/kv_cache_utils.py (page sizes, hybrid groups, num_blocks,
 * "GPU KV cache size", "Maximum concurrency", the max-seq-len error), vllm/engine/arg_utils.py
 * (max_num_batched_tokens / max_num_seqs defaults by card), vllm/config (block size 16,
 * utilization 0.9, CUDA graph capture sizes).
 */
#include "internal.h"
#include "engine/runtime.h"
#include "engine/terms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB ((double)(1ULL << 30))
#define MIB (1ULL << 20)

/* F-VLLM-01: vLLM 0.11.0 defaults. */
#define VLLM_UTIL_DEFAULT  0.9
#define VLLM_BLOCK_DEFAULT 16
/* arg_utils.py: cards with >= 70 GiB (not A100) get 8192 tokens / 1024 seqs for the server,
 * the others 2048 / 256. */
#define VLLM_BIG_CARD_BYTES (70ULL << 30)

/* F-VLLM-03: bytes per (sampled sequence x vocabulary entry) during the dummy sampler run:
 * fp32 logits (4) and the top-k/top-p sort of them (fp32 values 4 + int64 indices 8). */
#define VLLM_SAMPLER_BYTES_PER_LOGIT 16

static const struct vf_engine_flag vllm_flags[] = {
    {"--gpu-memory-utilization", NULL, true,
     "fraction of the card's CUDA total vLLM takes, 0 < x <= 1 (default 0.9)"},
    {"--max-num-seqs", NULL, true,
     "sequences scheduled at once (default 1024 on cards >= 70 GiB, else 256)"},
    {"--max-num-batched-tokens", NULL, true,
     "tokens per forward pass, the profile run's size (default 8192 on cards >= 70 GiB, "
     "else 2048)"},
    {"--enforce-eager", NULL, false, "no CUDA graphs (saves their memory, costs speed)"},
    {"--block-size", NULL, true, "tokens per KV cache block: 1, 8, 16, 32, 64, 128 (default 16)"},
    {"--kv-cache-memory", "--kv-cache-memory-bytes", true,
     "KV cache size per GPU (bytes or 8GiB); replaces the utilization budget"},
    {"--pipeline-parallel-size", "-pp", true, "pipeline stages: layers divided over N more GPUs"},
    {"--cpu-offload-gb", NULL, true,
     "GiB of weights per GPU kept in CPU memory, read over PCIe each step (default 0)"},
    {"--data-parallel-size", "-dp", true,
     "replicas of the model, each on its own tp x pp GPUs (default 1)"},
    {"--dtype", NULL, true, "auto|bfloat16|float16 (noted: sizes follow --weights)"},
    {"--quantization", "-q", true, "noted: the same as --weights"},
    {NULL, NULL, false, NULL},
};

/* F-GEN-01 split rule (terms.c), in vLLM's words: vLLM asserts num_heads % tp == 0 and
 * replicates KV heads that do not divide when tp is a multiple of them (QKVParallelLinear);
 * MLA caches a latent every rank keeps whole. A model without attention heads does not split. */
static bool vllm_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                           const char **why)
{
    static const struct vf__tp_words words = {
        "vLLM's tensor parallelism needs the attention heads to divide evenly over the cards",
        "vLLM's tensor parallelism needs the KV heads to divide over the cards or the cards to "
        "be a multiple of them",
    };
    (void)w;
    if (n > 1 && !m->n_heads) {
        *why = words.heads;
        return false;
    }
    return vf__term_tp_split(m, n, &words, why);
}

/* F-VLLM-13: the rule sets (issue 20). */
enum vregime {
    VR_V0,      /* the V0 engine, 0.5.0 - 0.7.x (and later with VLLM_USE_V1=0) */
    VR_V1,      /* the V1 engine before 0.11: piecewise CUDA graphs only */
    VR_V1_FULL, /* 0.11.0 on: full and piecewise CUDA graphs */
};
static const char *const regime_names[] = {"V0", "V1 before 0.11", "V1 0.11+"};

/* F-VLLM-13: the rules that changed by release, oldest first ('vramfit help engines'). */
static const struct vf_engine_rule vllm_rules[] = {
    {"0.5.0", "V0",
     "V0 engine: KV cache = utilization x card - profile peak (non-torch memory counts the CUDA "
     "context); the profile is max_num_batched_tokens = max(max_model_len, 2048) with chunked "
     "prefill off (it is on, at 512 tokens as in 0.5-0.6, only past 32000 tokens of context; "
     "0.7's chunk size not checked), 256 sequences; "
     "decode CUDA graphs for batch 1, 2, 4, 8..256 up to max_num_seqs, above the budget; one "
     "KV pool for every layer",
     "vllm/engine/arg_utils.py (use_long_context), vllm/config.py SchedulerConfig, "
     "vllm/worker/model_runner.py _BATCH_SIZES_TO_CAPTURE, vllm/worker/worker.py "
     "determine_num_available_blocks"},
    {"0.6.5", "V0",
     "memory profiling against a start-up baseline: the CUDA context leaves the non-torch "
     "memory (0.6.5-0.6.6 over-count it: 1.79 GiB measured on an H100)",
     "PR #10511 (vllm/utils.py memory_profiling), fixed by PR #11809 and #12126"},
    {"0.8.0", "V1 before 0.11",
     "V1 engine by default: KV cache groups and pages (kv_cache_utils.py) and its max-seq-len "
     "ValueError; server defaults 8192 tokens / 1024 sequences on 80 GB-class cards (H100, "
     "H200), else 2048 / 256; piecewise CUDA graphs for 1, 2, 4, 8.. up to min(2 x "
     "max_num_seqs, 512), above the budget; non-torch memory counts the CUDA context again",
     "vLLM 0.8.0 release notes (V1 on by default); PR #12369 (batch defaults); "
     "vllm/v1/worker/gpu_worker.py determine_available_memory"},
    {"0.10.0", "V1 before 0.11",
     "V1 measures non-torch memory against the start-up snapshot (V0's memory_profiling): "
     "the CUDA context leaves it",
     "PR #19312 (merged June 2025; 0.10.0 the first release assumed)"},
    {"0.11.0", "V1 0.11+",
     "cudagraph_mode FULL_AND_PIECEWISE by default: full graphs for the decode sizes up to "
     "max_num_seqs besides the piecewise ones; --kv-cache-memory",
     "vLLM 0.11.0 release notes; vllm/config/compilation.py CUDAGraphMode"},
    {NULL, NULL, NULL, NULL},
};

/* One configuration of vLLM, every default resolved. */
struct vcfg {
    double util;
    bool util_given;
    uint64_t max_seqs, batched_tokens, block;
    bool eager;
    uint64_t kv_memory; /* --kv-cache-memory, 0 = none */
    uint32_t tp, pp, dp;
    uint64_t offload; /* --cpu-offload-gb in bytes, per GPU */
    enum vf_dtype kv_dtype;
    uint64_t max_len; /* --max-model-len */
    uint64_t users;
    uint64_t usable; /* 0 = no card */
    uint64_t card;   /* CUDA's total of the card: usable, or more with a GPU snapshot */
    /* F-VLLM-13: the release's rules (issue 20) */
    const char *version; /* the release modelled, "0.11.0" */
    enum vregime regime;
    bool ctx_counted; /* its non-torch memory counts the CUDA context */
    bool chunked;     /* V0: chunked prefill on (the profile is max_num_batched_tokens) */
};

/* What vLLM computes from a configuration (per GPU). */
struct vres {
    uint64_t weights, act, non_torch, graphs, n_graphs;
    uint64_t offloaded; /* weights kept in CPU memory (--cpu-offload-gb), per GPU */
    uint64_t non_torch_lo, non_torch_hi; /* F-VLLM-04: its range */
    uint64_t requested;                  /* util x usable, or the need when no card */
    int64_t avail;                       /* bytes left for the KV cache (negative: none) */
    uint64_t page;                       /* one block of one layer */
    uint64_t group_size, n_groups, n_full_groups, n_sliding_groups;
    uint64_t num_blocks;
    uint64_t tokens;         /* "GPU KV cache size" */
    uint64_t blocks_per_req; /* blocks one request of max_len needs over all groups */
    uint64_t need_one;       /* bytes one request of max_len needs (the boot check) */
    uint64_t need_kv;        /* bytes users requests of max_len need */
    bool free_short;         /* the free memory is under the budget: vLLM raises at start */
    double concurrency;
    bool boots;
};

/* Layers of a kind on the most loaded pipeline stage (ceil of an even split). */
static uint64_t stage_layers(uint64_t n, uint32_t pp)
{
    return vf__div_ceil(n, pp ? pp : 1);
}

/* F-VLLM-07: KV bytes of one block of one layer (K and V of the rank's KV heads, or MLA's
 * latent + rope key that every rank keeps). */
static uint64_t page_bytes(const struct vf_model *m, const struct vcfg *c)
{
    enum vf_dtype kv = c->kv_dtype;
    uint64_t row;
    if (m->attn == VF_ATTN_MLA) {
        row = vf_dtype_bytes(kv, (uint64_t)m->kv_lora_rank + m->qk_rope_dim);
    } else {
        uint64_t nkv = m->n_kv_heads ? m->n_kv_heads : m->n_heads;
        nkv = nkv >= c->tp ? nkv / c->tp : 1; /* replicated: one head per rank */
        uint64_t hv = m->head_dim_v ? m->head_dim_v : m->head_dim;
        row =
            vf__sat_mul(nkv, vf__sat_add(vf_dtype_bytes(kv, m->head_dim), vf_dtype_bytes(kv, hv)));
    }
    return vf__sat_mul(row, c->block);
}

/* F-VLLM-08: blocks one request of len tokens needs: full-attention groups ceil(len/block),
 * sliding groups ceil(min(window - 1 + batched_tokens, len)/block) + 1. */
static uint64_t blocks_per_request(const struct vf_model *m, const struct vcfg *c,
                                   const struct vres *r, uint64_t len)
{
    uint64_t full = vf__div_ceil(len, c->block);
    uint64_t sw_tokens = (uint64_t)m->sliding_window + c->batched_tokens - 1;
    if (sw_tokens > len)
        sw_tokens = len;
    uint64_t sw = vf__div_ceil(sw_tokens, c->block) + 1;
    return vf__sat_add(vf__sat_mul(r->n_full_groups, full), vf__sat_mul(r->n_sliding_groups, sw));
}

/* F-VLLM-02: weights per GPU (storage q sharded over `ranks`) plus the rotary cos/sin cache
 * every rank keeps. VF_UNKNOWN when the weights are unknown. */
static uint64_t weights_term(const struct vf_model *m, const struct vf_quant *q, uint64_t ranks)
{
    uint64_t wb = vf_model_weight_bytes(m, q);
    uint64_t rope_dim = m->attn == VF_ATTN_MLA ? m->qk_rope_dim : m->head_dim;
    uint64_t max_pos = m->max_ctx_tokens == VF_UNKNOWN ? 0 : m->max_ctx_tokens;
    return vf__sat_add(wb == VF_UNKNOWN ? VF_UNKNOWN : vf__div_ceil(wb, ranks),
                       vf__sat_mul(vf__sat_mul(max_pos, rope_dim), 2));
}

/* F-VLLM-03: the profile run: a dummy forward of batched_tokens tokens (peak in the MLP:
 * gate_up output, activation output and the hidden state, at 2 B) and the dummy sampler over
 * min(max_num_seqs, batched_tokens) sequences (fp32 logits and their sort). */
static uint64_t profile_term(const struct vf_model *m, const struct vcfg *c)
{
    uint64_t per_token = 2 * (3 * vf__term_active_ffn(m) / c->tp + m->hidden);
    uint64_t seqs = c->max_seqs < c->batched_tokens ? c->max_seqs : c->batched_tokens;
    return vf__sat_add(vf__sat_mul(c->batched_tokens, per_token),
                       vf__term_logits(seqs, m->vocab, VLLM_SAMPLER_BYTES_PER_LOGIT));
}

/* F-VLLM-04: the non-torch memory per GPU from its parts, with its range: kernels and
 * workspaces, the CUDA context where the release counts it (F-VLLM-13), NCCL and custom
 * all-reduce with more than one rank. */
static void non_torch_term(const struct vcfg *c, uint64_t ranks, struct vres *r)
{
    r->non_torch = VF_RT_VLLM_KERNELS_BYTES;
    r->non_torch_lo = VF_RT_CUBLAS_WORKSPACE_BYTES;
    r->non_torch_hi = 2 * VF_RT_VLLM_KERNELS_BYTES;
    if (c->ctx_counted) {
        r->non_torch += VF_RT_VLLM_CONTEXT_BYTES;
        r->non_torch_lo += VF_RT_VLLM_CONTEXT_BYTES;
        r->non_torch_hi += VF_RT_CUDA_CONTEXT_BYTES;
    }
    if (ranks > 1) {
        r->non_torch += VF_RT_VLLM_NCCL_BYTES;
        r->non_torch_lo += VF_RT_VLLM_NCCL_LO_BYTES;
        r->non_torch_hi += VF_RT_VLLM_NCCL_HI_BYTES;
    }
}

/* F-VLLM-05/13: CUDA graphs (r->n_graphs, r->graphs), none with --enforce-eager. V0: one
 * decode graph per batch size 1, 2, 4, 8, 16, .. 256 up to max_num_seqs (rounded up to a
 * size). V1: piecewise graphs for 1, 2, 4, 8, 16, ... up to min(2 x max_num_seqs, 512) and
 * max_num_batched_tokens; from 0.11.0 also full graphs for the uniform-decode sizes up to
 * max_num_seqs (cudagraph_mode FULL_AND_PIECEWISE). Each graph keeps
 * VF_RT_VLLM_GRAPH_BYTES_PER_LAYER per layer of the stage. */
static void graphs_term(const struct vf_model *m, const struct vcfg *c, struct vres *r)
{
    if (c->eager)
        return;
    uint64_t layers = stage_layers(m->n_layers, c->pp);
    uint64_t cap = 2 * c->max_seqs < 512 ? 2 * c->max_seqs : 512;
    if (cap > c->batched_tokens)
        cap = c->batched_tokens;
    if (c->regime == VR_V0)
        cap = c->max_seqs < 256 ? c->max_seqs : 256;
    for (uint64_t s = 1, prev = 0; prev < cap && s <= (c->regime == VR_V0 ? 256 : cap);
         prev = s, s = s < 8 ? s * 2 : s + 8) {
        r->n_graphs++;
        if (c->regime == VR_V1_FULL && s <= c->max_seqs)
            r->n_graphs++;
    }
    r->graphs = vf__sat_mul(vf__sat_mul(r->n_graphs, layers), VF_RT_VLLM_GRAPH_BYTES_PER_LAYER);
}

/* F-VLLM-06: the KV groups of the hybrid allocator on the fullest pipeline stage (one group
 * when the layers are alike): r->group_size, n_full_groups, n_sliding_groups, n_groups. */
static void groups_term(const struct vf_model *m, const struct vcfg *c, struct vres *r)
{
    uint64_t nfull = 0, nsw = 0;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        enum vf_layer_kind k = m->layer_kind ? m->layer_kind[l] : VF_LAYER_ATTN_FULL;
        if (k == VF_LAYER_ATTN_FULL)
            nfull++;
        else if (k == VF_LAYER_ATTN_SLIDING && m->sliding_window)
            nsw++;
        else if (k == VF_LAYER_ATTN_SLIDING)
            nfull++;
    }
    nfull = stage_layers(nfull, c->pp);
    nsw = stage_layers(nsw, c->pp);
    if (c->regime == VR_V0) { /* F-VLLM-13: V0 pages every layer alike, one pool */
        nfull += nsw;
        nsw = 0;
    }
    if (nfull && nsw) {
        uint64_t mn = nfull < nsw ? nfull : nsw, mx = nfull < nsw ? nsw : nfull;
        r->group_size = 4 * mx < 5 * mn ? mx : mn;
        r->n_full_groups = vf__div_ceil(nfull, r->group_size);
        r->n_sliding_groups = vf__div_ceil(nsw, r->group_size);
    } else {
        r->group_size = nfull + nsw;
        r->n_full_groups = nfull ? 1 : 0;
        r->n_sliding_groups = nsw ? 1 : 0;
    }
    r->n_groups = r->n_full_groups + r->n_sliding_groups;
}

/* F-VLLM-09/10: the budget (r->requested), the KV cache that fills it (r->avail, whole blocks
 * of block_all bytes in r->num_blocks) and what vLLM prints of it (tokens, concurrency,
 * whether one request of max_len boots). Needs weights, act, non_torch, need_* set. */
static void budget_term(const struct vcfg *c, uint64_t block_all, struct vres *r)
{
    uint64_t non_kv = vf__sat_add(vf__sat_add(r->weights, r->act), r->non_torch);
    if (c->kv_memory) {
        r->avail = (int64_t)c->kv_memory;
        r->requested = vf__sat_add(non_kv, c->kv_memory);
    } else if (c->usable) {
        r->requested = (uint64_t)floor((double)c->card * c->util);
        r->free_short = r->requested > c->usable;
        r->avail = (int64_t)r->requested - (int64_t)(non_kv > INT64_MAX ? INT64_MAX : non_kv);
    } else {
        r->avail = (int64_t)(r->need_kv > INT64_MAX ? INT64_MAX : r->need_kv);
        r->requested = vf__sat_add(non_kv, r->need_kv);
    }
    if (r->avail > 0 && block_all && block_all != VF_UNKNOWN)
        r->num_blocks = (uint64_t)r->avail / block_all;
    if (r->n_groups)
        r->tokens = r->num_blocks / r->n_groups * c->block;
    r->concurrency = r->blocks_per_req ? (double)r->num_blocks / (double)r->blocks_per_req : 0;
    r->boots = !r->free_short && r->avail > 0 && (uint64_t)r->avail >= r->need_one;
}

/* Does vLLM start and hold users requests of max_len at once (F-VLLM-09/12)? */
static bool vllm_holds(const struct vcfg *c, const struct vres *r)
{
    return r->boots && r->num_blocks >= vf__sat_mul(r->blocks_per_req, c->users);
}

/* The whole of vLLM's startup arithmetic for one configuration (F-VLLM-02..10), term by
 * term. Pure: the fixes call it again with changed settings. */
static void vllm_compute(const struct vf_model *m, const struct vf_quant *q, const struct vcfg *c,
                         struct vres *r)
{
    memset(r, 0, sizeof *r);
    uint64_t ranks = (uint64_t)c->tp * c->pp;
    r->weights = weights_term(m, q, ranks);
    /* F-VLLM-02: --cpu-offload-gb moves up to that many bytes of this GPU's weights to
     * pinned CPU memory (vllm/model_executor/models/utils.py maybe_offload_to_cpu) */
    if (r->weights != VF_UNKNOWN) {
        r->offloaded = c->offload < r->weights ? c->offload : r->weights;
        r->weights -= r->offloaded;
    }
    r->act = profile_term(m, c);
    non_torch_term(c, ranks, r);
    graphs_term(m, c, r);
    groups_term(m, c, r);
    r->page = page_bytes(m, c);
    uint64_t block_all = vf__sat_mul(r->page, r->group_size); /* one pool block, all layers */
    r->blocks_per_req = blocks_per_request(m, c, r, c->max_len);
    r->need_one = vf__sat_mul(r->blocks_per_req, block_all);
    r->need_kv = vf__sat_mul(r->need_one, c->users);
    budget_term(c, block_all, r);
}

/* The largest max_model_len whose users requests fit num_blocks (F-VLLM-11), 0 when none. */
struct len_key {
    const struct vf_model *m;
    const struct vcfg *c;
    const struct vres *r;
    uint64_t budget_blocks; /* blocks available for all users */
    uint64_t users;
};
static bool len_fits(uint64_t len, void *ud)
{
    const struct len_key *k = ud;
    uint64_t b = vf__sat_mul(blocks_per_request(k->m, k->c, k->r, len), k->users);
    return b <= k->budget_blocks;
}

static uint64_t max_len_for(const struct vf_model *m, const struct vcfg *c, const struct vres *r,
                            uint64_t budget_blocks, uint64_t users, uint64_t hi)
{
    struct len_key k = {m, c, r, budget_blocks, users};
    if (!len_fits(1, &k))
        return 0;
    return vf_bisect(1, hi, len_fits, &k);
}

/* Parses the engine options into c (F-VLLM-01); VF_EINVAL names the option. */
static enum vf_err parse_opts(const struct vf_workload *w, struct vcfg *c, struct vf_error *err)
{
    const struct vf_engine_opts *o = &w->opts;
    const char *v;
    struct vf_error e2 = {0};

    if ((v = vf_engine_opt(o, "--gpu-memory-utilization"))) {
        char *end;
        double u = strtod(v, &end);
        if (!*v || *end || !(u > 0 && u <= 1))
            return vf__errf(err, VF_EINVAL,
                            "--gpu-memory-utilization '%s': give a fraction in (0, 1], e.g. 0.9",
                            v);
        c->util = u;
        c->util_given = true;
    }
    if ((v = vf_engine_opt(o, "--max-num-seqs"))) {
        if (vf_parse_count(v, &c->max_seqs, &e2) || !c->max_seqs || c->max_seqs > VF_MAX_USERS)
            return vf__errf(err, VF_EINVAL, "--max-num-seqs '%s': give a count from 1 to %llu", v,
                            (unsigned long long)VF_MAX_USERS);
    }
    if ((v = vf_engine_opt(o, "--max-num-batched-tokens"))) {
        if (vf_parse_tokens(v, &c->batched_tokens, &e2) || !c->batched_tokens ||
            c->batched_tokens > VF_MAX_CTX_TOKENS)
            return vf__errf(err, VF_EINVAL,
                            "--max-num-batched-tokens '%s': give a token count (8192, 8k)", v);
    }
    if ((v = vf_engine_opt(o, "--block-size"))) {
        uint64_t b;
        if (vf_parse_count(v, &b, &e2) || !b || b > 1024 || (b & (b - 1)))
            return vf__errf(err, VF_EINVAL,
                            "--block-size '%s': give a power of two (1, 8, 16, 32, 64, 128)", v);
        c->block = b;
    }
    if (vf_engine_opt(o, "--enforce-eager"))
        c->eager = true;
    if ((v = vf_engine_opt(o, "--kv-cache-memory"))) {
        if (vf_parse_bytes(v, &c->kv_memory, &e2) || !c->kv_memory ||
            c->kv_memory > ((uint64_t)1 << 50))
            return vf__errf(err, VF_EINVAL,
                            "--kv-cache-memory '%s': give a size (8GiB, 8589934592)", v);
    }
    if ((v = vf_engine_opt(o, "--cpu-offload-gb"))) {
        char *end;
        double g = strtod(v, &end);
        if (!*v || *end || !(g >= 0 && g <= 65536))
            return vf__errf(err, VF_EINVAL, "--cpu-offload-gb '%s': give GiB per GPU, e.g. 4", v);
        c->offload = (uint64_t)(g * (double)(1ULL << 30));
    }
    if ((v = vf_engine_opt(o, "--data-parallel-size"))) {
        uint64_t d;
        if (vf_parse_count(v, &d, &e2) || !d || d > 1024)
            return vf__errf(err, VF_EINVAL, "--data-parallel-size '%s': give 1 to 1024", v);
        c->dp = (uint32_t)d;
    }
    if ((v = vf_engine_opt(o, "--pipeline-parallel-size"))) {
        uint64_t p;
        if (vf_parse_count(v, &p, &e2) || !p || p > 64)
            return vf__errf(err, VF_EINVAL, "--pipeline-parallel-size '%s': give 1 to 64", v);
        c->pp = (uint32_t)p;
    }
    return VF_OK;
}

/* F-VLLM-13: the rules of c->version (vllm_rules): the regime, whether the non-torch memory
 * counts the CUDA context. */
static void resolve_version(struct vcfg *c)
{
    if (vf_engine_version_cmp(c->version, "0.8.0") < 0)
        c->regime = VR_V0;
    else if (vf_engine_version_cmp(c->version, "0.11.0") < 0)
        c->regime = VR_V1;
    else
        c->regime = VR_V1_FULL;
    c->ctx_counted = vf_engine_version_cmp(c->version, "0.6.5") < 0 ||
                     (c->regime == VR_V1 && vf_engine_version_cmp(c->version, "0.10.0") < 0);
}

/* F-VLLM-01/13: the scheduler defaults of the release. V0: 256 sequences; chunked prefill
 * only past 32000 tokens of context (then 512 tokens a step), else one step holds the
 * longest prompt, max(max_model_len, 2048). V1: 8192 / 1024 on cards >= 70 GiB, else
 * 2048 / 256. */
static void default_batch(struct vcfg *c)
{
    if (c->regime == VR_V0) {
        c->chunked = c->max_len > 32000;
        if (!c->max_seqs)
            c->max_seqs = 256;
        if (!c->batched_tokens)
            c->batched_tokens = c->chunked ? 512 : (c->max_len > 2048 ? c->max_len : 2048);
        return;
    }
    bool big = c->usable >= VLLM_BIG_CARD_BYTES;
    if (!c->max_seqs)
        c->max_seqs = big ? 1024 : 256;
    if (!c->batched_tokens)
        c->batched_tokens = big ? 8192 : 2048;
}

/* Fills the configuration from the workload and vLLM's defaults (F-VLLM-01, 13). */
static enum vf_err make_cfg(const struct vf_model *m, const struct vf_workload *w, struct vcfg *c,
                            struct vf_error *err)
{
    memset(c, 0, sizeof *c);
    c->util = VLLM_UTIL_DEFAULT;
    c->block = VLLM_BLOCK_DEFAULT;
    c->pp = 1;
    c->dp = 1;
    c->version = w->engine_version ? w->engine_version : vf__engine_vllm.version;
    resolve_version(c);
    enum vf_err rc = parse_opts(w, c, err);
    if (rc)
        return rc;
    c->tp = w->gpus ? w->gpus : 1;
    c->usable = w->usable_bytes == VF_UNKNOWN ? 0 : w->usable_bytes;
    /* F-VLLM-09: with a GPU snapshot the budget is a fraction of the total, checked against
     * the free memory (0.10.0 on, gpu_worker.py init_device); before, usable stands for the
     * card */
    c->card = c->usable;
    if (c->usable && w->card_total_bytes > c->usable &&
        vf_engine_version_cmp(c->version, "0.10.0") >= 0)
        c->card = w->card_total_bytes;
    c->users = w->users ? w->users : 1;
    c->max_len = vf__term_ctx(m, w);
    c->kv_dtype = vf__term_kv_dtype(m, w);
    default_batch(c);
    return VF_OK;
}

static double gib(uint64_t b)
{
    return (double)b / GIB;
}

/* The fix that grows the budget (F-VLLM-12): the smallest --gpu-memory-utilization that holds
 * users x ctx with the graphs still on the card, or, where --kv-cache-memory replaced the
 * utilization, the KV cache size that holds them. */
static void budget_fix(struct vf_arena *a, struct vf_estimate *e, const struct vcfg *c,
                       const struct vres *r)
{
    char b1[32], b2[32];
    uint64_t non_kv = r->weights + r->act + r->non_torch;
    uint64_t kv = vf__sat_mul(vf__sat_mul(r->blocks_per_req, c->users), r->page * r->group_size);
    uint64_t need = vf__sat_add(non_kv, kv);
    if (need == VF_UNKNOWN)
        return;
    if (c->kv_memory) {
        if (need + r->graphs <= c->usable)
            vf__fix(a, e, "--kv-cache-memory %llu  (%s: room for %llu x %s)",
                    (unsigned long long)kv, vf_format_bytes(b1, sizeof b1, kv, VF_FMT_IEC),
                    (unsigned long long)c->users, vf_format_tokens(b2, sizeof b2, c->max_len));
        return;
    }
    /* the utilization is a fraction of the card's total; the budget and the graphs must stay
     * within the free memory (c->usable) */
    double u = ceil((double)need / (double)c->card * 100.0) / 100.0;
    if (u <= 1.0 && (uint64_t)floor(u * (double)c->card) + r->graphs <= c->usable)
        vf__fix(a, e, "--gpu-memory-utilization %.2f  (KV cache %s: room for %llu x %s)", u,
                vf_format_bytes(b1, sizeof b1, kv, VF_FMT_IEC), (unsigned long long)c->users,
                vf_format_tokens(b2, sizeof b2, c->max_len));
}

/* The fixes (F-VLLM-12): each solved on a changed configuration. */
static void add_fixes(struct vf_arena *a, struct vf_estimate *e, const struct vf_model *m,
                      const struct vf_quant *q, const struct vcfg *c, const struct vres *r)
{
    char b1[32], b2[32];
    bool short_kv = r->num_blocks < vf__sat_mul(r->blocks_per_req, c->users) || !r->boots;
    bool short_card = c->usable && r->requested + r->graphs > c->usable;
    if (!c->usable || (!short_kv && !short_card))
        return;
    if (r->free_short) { /* vLLM stops before the model loads: only the budget matters */
        budget_fix(a, e, c, r);
        vf__fix(a, e, "free %s on the GPU (other processes hold it; 'vramfit smi' names them)",
                vf_format_bytes(b1, sizeof b1, r->requested - c->usable, VF_FMT_IEC));
        return;
    }

    if (short_kv) {
        /* the largest --max-model-len for the asked users */
        uint64_t hi =
            m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN ? m->max_ctx_tokens : c->max_len;
        uint64_t len = max_len_for(m, c, r, r->num_blocks, c->users, hi);
        len = len / c->block * c->block;
        if (len >= c->block)
            vf__fix(a, e, "--max-model-len %llu  (room for %llu user%s at that length %s)",
                    (unsigned long long)len, (unsigned long long)c->users, c->users > 1 ? "s" : "",
                    c->kv_memory ? "in --kv-cache-memory" : "at this utilization");

        budget_fix(a, e, c, r);

        /* an 8-bit KV cache */
        if (vf_dtype_bytes(c->kv_dtype, 1024) > 1024) {
            struct vcfg c8 = *c;
            struct vres r8;
            c8.kv_dtype = VF_DT_FP8;
            vllm_compute(m, q, &c8, &r8);
            if (r8.num_blocks >= vf__sat_mul(r8.blocks_per_req, c->users) && r8.boots)
                vf__fix(a, e, "--kv-cache-dtype fp8  (%s tokens: room for %llu x %s)",
                        vf__format_grouped(b1, sizeof b1, r8.tokens), (unsigned long long)c->users,
                        vf_format_tokens(b2, sizeof b2, c->max_len));
        }

        /* fewer sequences scheduled at once: a smaller sampler warm-up and fewer graphs */
        if (c->users < c->max_seqs) {
            struct vcfg cs = *c;
            struct vres rs;
            cs.max_seqs = c->users;
            vllm_compute(m, q, &cs, &rs);
            if (rs.num_blocks > r->num_blocks)
                vf__fix(a, e, "--max-num-seqs %llu  (%s tokens, %s more KV cache%s)",
                        (unsigned long long)c->users, vf__format_grouped(b1, sizeof b1, rs.tokens),
                        vf_format_bytes(b2, sizeof b2,
                                        (rs.num_blocks - r->num_blocks) * r->page * r->group_size,
                                        VF_FMT_IEC),
                        rs.num_blocks >= vf__sat_mul(rs.blocks_per_req, c->users) && rs.boots
                            ? ": fits"
                            : "");
        }
    }

    /* CUDA graphs sit above the budget: eager mode gives their memory back */
    if (r->graphs && short_card)
        vf__fix(a, e, "--enforce-eager  (saves %s of CUDA graphs above the budget)",
                vf_format_bytes(b1, sizeof b1, r->graphs, VF_FMT_IEC));

    /* two cards */
    if (c->tp == 1 && short_kv) {
        const char *why;
        if (vllm_can_split(m, NULL, 2, &why)) {
            struct vcfg c2 = *c;
            struct vres r2;
            c2.tp = 2;
            vllm_compute(m, q, &c2, &r2);
            if (r2.num_blocks >= vf__sat_mul(r2.blocks_per_req, c->users) && r2.boots)
                vf__fix(a, e, "--tensor-parallel-size 2  (%s tokens per GPU: room for %llu x %s)",
                        vf__format_grouped(b1, sizeof b1, r2.tokens), (unsigned long long)c->users,
                        vf_format_tokens(b2, sizeof b2, c->max_len));
        }
    }
}

/* The checks of a configuration against the input limits and what vLLM refuses: more GPUs
 * than the limit, a context over the limit, a split the heads do not allow (F-GEN-01), more
 * pipeline stages than layers. */
static enum vf_err check_cfg(const struct vf_model *m, const struct vf_workload *w,
                             const struct vcfg *c, struct vf_error *err)
{
    enum vf_err rc;
    if ((rc = vf__term_limits(c->users, (uint64_t)c->tp * c->pp * c->dp, err)))
        return rc;
    if (c->max_len > VF_MAX_CTX_TOKENS)
        return vf__errf(err, VF_ERANGE, "context %llu is over the limit of %llu",
                        (unsigned long long)c->max_len, (unsigned long long)VF_MAX_CTX_TOKENS);
    if ((rc = vf__term_check_split(m, w, &vf__engine_vllm, c->tp, true, err)))
        return rc;
    if (c->pp > 1 && c->pp > m->n_layers)
        return vf__errf(err, VF_EUNSUPPORTED, "--pipeline-parallel-size %u: '%s' has %u layers",
                        c->pp, m->id, m->n_layers);
    return VF_OK;
}

/* The assumptions of an estimate: the engine, every default taken (F-VLLM-01..10). */
static void vllm_assume(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        const struct vcfg *c, const struct vres *r, struct vf_estimate *e)
{
    char b1[32], b2[32], b3[32];
    vf__assume(a, e,
               "engine vllm %s, vllm serve (%s rules%s): KV cache = utilization x card - "
               "(weights + activation peak + non-torch), whole blocks; CUDA graphs above it "
               "(F-VLLM-01..13)",
               c->version, regime_names[c->regime],
               w->engine_version ? "" : "; the newest modelled, --engine vllm@VERSION for another");
    vf__assume(a, e,
               "non-torch memory %s (%s to %s): kernels and cuBLAS workspaces 0.16 GiB (measured "
               "once, vllm-pr12126)%s%s (F-VLLM-04)",
               vf_format_bytes(b1, sizeof b1, r->non_torch, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, r->non_torch_lo, VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, r->non_torch_hi, VF_FMT_IEC),
               c->ctx_counted ? ", + the CUDA context this release counts, 0.19 GiB (fitted "
                                "on vllm-10517)"
                              : "",
               c->tp * c->pp > 1 ? ", + NCCL and custom all-reduce 256 MiB (assumed)" : "");
    if (c->regime == VR_V0)
        vf__assume(a, e,
                   "V0: chunked prefill %s, so the profile run is %llu tokens; decode CUDA "
                   "graphs only; one KV pool for every layer (F-VLLM-13)",
                   c->chunked ? "on past 32000 tokens of context" : "off up to 32000 tokens",
                   (unsigned long long)c->batched_tokens);
    if (!w->ctx_tokens)
        vf__assume(a, e, "--max-model-len %s: the model's maximum",
                   vf_format_tokens(b1, sizeof b1, c->max_len));
    if (c->kv_memory)
        vf__assume(a, e,
                   "--kv-cache-memory %s: the KV cache is that size, whatever the utilization "
                   "(gpu_worker.py, determine_available_memory)%s",
                   vf_format_bytes(b1, sizeof b1, c->kv_memory, VF_FMT_IEC),
                   vf_engine_version_cmp(c->version, "0.11.0") < 0
                       ? "; an option of 0.11 on: for this release it stands for the KV cache "
                         "vLLM measured"
                       : "");
    else if (c->usable)
        vf__assume(a, e, "--gpu-memory-utilization %.2f%s: vLLM takes %s of the card's %s%s%s%s",
                   c->util, c->util_given ? "" : " (default)",
                   vf_format_bytes(b1, sizeof b1, r->requested, VF_FMT_IEC),
                   vf_format_bytes(b2, sizeof b2, c->card, VF_FMT_IEC),
                   c->card > c->usable ? " (total; free now " : "",
                   c->card > c->usable ? vf_format_bytes(b3, sizeof b3, c->usable, VF_FMT_IEC) : "",
                   c->card > c->usable ? ", vLLM checks the budget against it)" : "");
    else
        vf__assume(a, e,
                   "no card given: the budget is what %llu x %s tokens need (vLLM itself "
                   "fills gpu_memory_utilization x the card)",
                   (unsigned long long)c->users, vf_format_tokens(b1, sizeof b1, c->max_len));
    vf__assume(a, e, "--max-num-batched-tokens %llu, --max-num-seqs %llu%s (%s)",
               (unsigned long long)c->batched_tokens, (unsigned long long)c->max_seqs,
               vf_engine_opt(&w->opts, "--max-num-batched-tokens") ||
                       vf_engine_opt(&w->opts, "--max-num-seqs")
                   ? " (given)"
                   : "",
               c->regime == VR_V0 ? "V0 defaults: 256 sequences, max(max_model_len, 2048) "
                                    "tokens without chunked prefill, 512 with it"
                                  : "V1 server defaults: 8192/1024 on cards >= 70 GiB, else "
                                    "2048/256");
    if (c->users > c->max_seqs)
        vf__assume(a, e, "%llu users but --max-num-seqs %llu: the rest wait in the queue",
                   (unsigned long long)c->users, (unsigned long long)c->max_seqs);
    vf__assume(a, e, "KV cache %s, --block-size %llu: %s B per block per layer%s",
               vf_dtype_name(c->kv_dtype), (unsigned long long)c->block,
               vf_format_bytes(b1, sizeof b1, r->page, VF_FMT_EXACT),
               m->attn == VF_ATTN_MLA ? " (MLA: one latent + rope key, every rank keeps it)" : "");
    if (r->n_sliding_groups && r->n_full_groups)
        vf__assume(a, e,
                   "hybrid allocator: %llu full and %llu sliding-window groups of %llu layers "
                   "share one block pool; sliding layers keep %u + %llu tokens per request",
                   (unsigned long long)r->n_full_groups, (unsigned long long)r->n_sliding_groups,
                   (unsigned long long)r->group_size, m->sliding_window,
                   (unsigned long long)c->batched_tokens);
    if (m->recurrent_state_bytes)
        vf__assume(a, e,
                   "recurrent (Mamba / linear-attention) layers: their per-sequence state is not "
                   "modelled in vLLM's page layout; attention layers only");
    if (c->tp > 1 && m->attn != VF_ATTN_MLA && m->n_kv_heads && m->n_kv_heads < c->tp)
        vf__assume(a, e, "%u KV heads over %u GPUs: vLLM replicates them, one per GPU",
                   m->n_kv_heads, c->tp);
    if (c->pp > 1)
        vf__assume(a, e,
                   "--pipeline-parallel-size %u: layers split evenly, the fullest stage "
                   "shown",
                   c->pp);
    if (vf_engine_opt(&w->opts, "--dtype"))
        vf__assume(a, e, "--dtype %s noted: sizes follow --weights",
                   vf_engine_opt(&w->opts, "--dtype"));
    if (c->eager)
        vf__assume(a, e, "--enforce-eager: no CUDA graphs");
}

/* The assumptions of the options that spread the model (F-VLLM-02): CPU offload, data
 * parallelism. */
static void spread_assume(struct vf_arena *a, const struct vcfg *c, const struct vres *r,
                          struct vf_estimate *e)
{
    char b1[32];
    if (c->offload)
        vf__assume(a, e,
                   "--cpu-offload-gb: %s of weights per GPU in pinned CPU memory, read over PCIe "
                   "at every step (slow); the GPU holds the rest",
                   vf_format_bytes(b1, sizeof b1, r->offloaded, VF_FMT_IEC));
    if (c->dp > 1)
        vf__assume(a, e,
                   "--data-parallel-size %u: %u replicas, %u GPUs in all; the cards given "
                   "(--gpu CARD:N) are one replica's tp x pp, every GPU as shown (expert "
                   "parallelism is not modelled: experts are split by tp)",
                   c->dp, c->dp, c->dp * c->tp * c->pp);
}

/* The components, in DESIGN section 8 names (F-VLLM-02..05, 09). */
static void vllm_components(const struct vres *r, struct vf_estimate *e)
{
    vf__add_component(e, "weights", r->weights, "load",
                      "weights / (tp x pp) + rotary cos/sin cache (F-VLLM-02)");
    vf__add_component(e, "activation_peak", r->act, "profile",
                      "dummy forward of max_num_batched_tokens + sampler (F-VLLM-03)");
    vf__add_component(e, "non_torch", r->non_torch, NULL,
                      "CUDA context, cuBLAS, kernels, NCCL (F-VLLM-04)");
    uint64_t kv_reserved = r->avail > 0 ? (uint64_t)r->avail : 0;
    vf__add_component(e, "kv_cache", kv_reserved, NULL,
                      "the rest of the budget, whole blocks used (F-VLLM-09)");
    vf__add_component(e, "cuda_graphs", r->graphs, "capture",
                      "captured after the KV cache, above the budget (F-VLLM-05)");
}

/*
 * F-VLLM-12: the total. vLLM takes requested = utilization x card whatever the workload; the
 * CUDA graphs come on top. The engine's own start-up check is the verdict: when one request
 * of max_model_len does not fit the KV cache vLLM raises (kv_cache_utils.py,
 * check_enough_kv_cache_memory), and when users x ctx do not fit the blocks the asked workload
 * does not run at once either. Then, with a card, the total is over the card by the KV
 * shortfall (usable + 1 + need - room): fit, pick and the exit code say "does not fit", and
 * the fixes say which utilization, length or dtype would hold it. Without a card the total is
 * the need. Monotone in ctx and users.
 */
static uint64_t vllm_total(const struct vcfg *c, const struct vres *r)
{
    uint64_t non_kv = r->weights + r->act + r->non_torch;
    uint64_t need_all = vf__sat_add(non_kv, r->need_kv);
    bool holds = vllm_holds(c, r);
    if (holds)
        return vf__sat_add(r->requested, r->graphs);
    if (!c->usable)
        return vf__sat_add(need_all, r->graphs);
    /* never below what the job holds at once: weights larger than the card fail while
     * loading, before any budget is taken */
    uint64_t floor = vf__sat_add(need_all, r->graphs);
    if (r->free_short) { /* over the free memory by what the budget lacks */
        uint64_t t = vf__sat_add(c->usable + 1, r->requested - c->usable);
        return t > floor ? t : floor;
    }
    uint64_t room = vf__sat_mul(r->num_blocks, r->page * r->group_size);
    uint64_t t = vf__sat_add(c->usable + 1, r->need_kv > room ? r->need_kv - room : 0);
    return t > floor ? t : floor;
}

/* vLLM's "Maximum concurrency ... %.2fx" is Python's %-formatting, which rounds to nearest
 * (kv_cache_utils.py, _report_kv_cache_config): 10.666 prints 10.67, not 10.66. */
static double conc_2dp(double x)
{
    return vf__round_pos(x * 100.0) / 100.0;
}

/* The engine results (JSON "vllm"). */
static void vllm_extras(const struct vcfg *c, const struct vres *r, struct vf_estimate *e)
{
    e->extra_name = "vllm";
    vf__extra_text(e, "regime", regime_names[c->regime]);
    vf__extra_u64(e, "kv_cache_tokens", r->tokens);
    vf__extra_real(e, "max_concurrency", conc_2dp(r->concurrency));
    vf__extra_u64(e, "num_gpu_blocks", r->num_blocks);
    vf__extra_real(e, "gpu_memory_utilization", c->util);
    vf__extra_u64(e, "max_num_seqs", c->max_seqs);
    vf__extra_u64(e, "max_num_batched_tokens", c->batched_tokens);
    vf__extra_u64(e, "block_size", c->block);
    vf__extra_u64(e, "cuda_graphs", r->n_graphs);
    vf__extra_u64(e, "kv_one_request_bytes", r->need_one);
    vf__extra_u64(e, "non_torch_low_bytes", r->non_torch_lo);
    vf__extra_u64(e, "non_torch_high_bytes", r->non_torch_hi);
    vf__extra_bool(e, "boots", r->boots);
}

static void vllm_lines_v1(struct vf_arena *a, const struct vf_model *m, const struct vcfg *c,
                          const struct vres *r, struct vf_estimate *e);

/* Weights per GPU larger than the card: PyTorch's out-of-memory error while the model loads,
 * before vLLM measures anything (F-VLLM-10). */
static bool weights_oom(struct vf_arena *a, const struct vcfg *c, const struct vres *r,
                        struct vf_estimate *e)
{
    char b1[32], b2[32];
    if (!c->usable || r->weights <= c->usable)
        return false;
    vf__line(a, e,
             "torch.OutOfMemoryError: CUDA out of memory while loading the weights (%s per GPU > "
             "card %s)",
             vf_format_bytes(b1, sizeof b1, r->weights, VF_FMT_IEC),
             vf_format_bytes(b2, sizeof b2, c->usable, VF_FMT_IEC));
    return true;
}

/* The log lines V0 would print (F-VLLM-10/13: worker.py, "# GPU blocks", and its
 * raise_if_cache_size_invalid check). */
static void vllm_lines_v0(struct vf_arena *a, const struct vcfg *c, const struct vres *r,
                          struct vf_estimate *e)
{
    char b1[32];
    if (weights_oom(a, c, r, e))
        return;
    vf__line(a, e, "Loading model weights took %.4f GB", gib(r->weights));
    if (r->avail <= 0 || !r->num_blocks) {
        vf__line(a, e,
                 "ValueError: No available memory for the cache blocks. Try increasing "
                 "`gpu_memory_utilization` when initializing the engine.");
        return;
    }
    vf__line(a, e, "# GPU blocks: %llu", (unsigned long long)r->num_blocks);
    if (!r->boots) {
        vf__line(a, e,
                 "ValueError: The model's max seq len (%llu) is larger than the maximum number "
                 "of tokens that can be stored in KV cache (%llu). Try increasing "
                 "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                 "engine.",
                 (unsigned long long)c->max_len, (unsigned long long)(r->num_blocks * c->block));
        return;
    }
    vf__line(a, e, "Maximum concurrency for %s tokens per request: %.2fx",
             vf__format_grouped(b1, sizeof b1, c->max_len), r->concurrency);
}

/* The log lines vLLM would print (F-VLLM-10). */
static void vllm_lines(struct vf_arena *a, const struct vf_model *m, const struct vcfg *c,
                       const struct vres *r, struct vf_estimate *e)
{
    char b1[32], b2[32], b3[32];
    if (c->regime == VR_V0)
        vllm_lines_v0(a, c, r, e);
    else
        vllm_lines_v1(a, m, c, r, e);
    if (c->usable && r->boots && r->requested + r->graphs > c->usable)
        vf__line(a, e,
                 "torch.OutOfMemoryError: CUDA out of memory while capturing CUDA graphs "
                 "(budget %s + graphs %s > card %s)",
                 vf_format_bytes(b1, sizeof b1, r->requested, VF_FMT_IEC),
                 vf_format_bytes(b2, sizeof b2, r->graphs, VF_FMT_IEC),
                 vf_format_bytes(b3, sizeof b3, c->usable, VF_FMT_IEC));
}

/* The log lines V1 would print (F-VLLM-10). */
static void vllm_lines_v1(struct vf_arena *a, const struct vf_model *m, const struct vcfg *c,
                          const struct vres *r, struct vf_estimate *e)
{
    char b1[32], b2[32];
    if (r->free_short) {
        vf__line(a, e,
                 "ValueError: Free memory on device (%.2f/%.2f GiB) on startup is less than "
                 "desired GPU memory utilization (%g, %.2f GiB). Decrease GPU memory "
                 "utilization or reduce GPU memory used by other processes.",
                 gib(c->usable), gib(c->card), c->util, gib(r->requested));
        return;
    }
    if (weights_oom(a, c, r, e))
        return;
    vf__line(a, e, "Model loading took %.4f GiB", gib(r->weights));
    if (r->avail <= 0) {
        vf__line(a, e,
                 "ValueError: No available memory for the cache blocks. Try increasing "
                 "`gpu_memory_utilization` when initializing the engine.");
    } else {
        vf__line(a, e, "Available KV cache memory: %.2f GiB", gib((uint64_t)r->avail));
        if (!r->boots) {
            uint64_t est =
                max_len_for(m, c, r, (uint64_t)r->avail / (r->page * r->group_size), 1, c->max_len);
            vf__line(a, e,
                     "ValueError: To serve at least one request with the models's max seq len "
                     "(%llu), (%.2f GiB KV cache is needed, which is larger than the available "
                     "KV cache memory (%.2f GiB). Based on the available memory, the estimated "
                     "maximum model length is %llu. Try increasing `gpu_memory_utilization` or "
                     "decreasing `max_model_len` when initializing the engine.",
                     (unsigned long long)c->max_len, gib(r->need_one), gib((uint64_t)r->avail),
                     (unsigned long long)est);
        } else {
            vf__line(a, e, "GPU KV cache size: %s tokens",
                     vf__format_grouped(b1, sizeof b1, r->tokens));
            vf__line(a, e, "Maximum concurrency for %s tokens per request: %.2fx",
                     vf__format_grouped(b2, sizeof b2, c->max_len), r->concurrency);
            if (r->graphs)
                vf__line(a, e, "Graph capturing finished, took %.2f GiB", gib(r->graphs));
        }
    }
}

static enum vf_err vllm_estimate(struct vf_arena *a, const struct vf_model *m,
                                 const struct vf_workload *w, struct vf_estimate *e,
                                 struct vf_error *err)
{
    struct vcfg c;
    struct vres r;
    enum vf_err rc;
    if ((rc = make_cfg(m, w, &c, err)))
        return rc;
    vf__term_begin(m, &vf__engine_vllm, e);
    e->gpus = c.tp * c.pp;
    e->users = c.users;
    e->ctx_tokens = c.max_len;
    if ((rc = check_cfg(m, w, &c, err)) || (rc = vf__term_weights(m, vf__term_storage(w), e, err)))
        return rc;
    vf__term_kv_per_token(m, c.kv_dtype, e);
    vllm_compute(m, &e->weights, &c, &r);
    if (r.act == VF_UNKNOWN || r.weights == VF_UNKNOWN || r.need_kv == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "vllm: sizes of '%s' overflow 64 bits", m->id);
    vllm_assume(a, m, w, &c, &r, e);
    spread_assume(a, &c, &r, e);
    vllm_components(&r, e);
    e->total_bytes = vllm_total(&c, &r);
    e->host_bytes = vf__sat_mul(r.offloaded, (uint64_t)c.tp * c.pp);
    vllm_extras(&c, &r, e);
    vllm_lines(a, m, &c, &r, e);
    add_fixes(a, e, m, &e->weights, &c, &r);
    return VF_OK;
}

const struct vf_engine vf__engine_vllm = {
    .name = "vllm",
    .version = "0.11.0",
    .tasks = 1u << VF_TASK_INFER,
    .can_split = vllm_can_split,
    .estimate = vllm_estimate,
    .flags = vllm_flags,
    .rules = vllm_rules,
};
