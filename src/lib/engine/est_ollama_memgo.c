/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_ollama_memgo.c - Ollama's older memory planner, F-OLL-08 (docs/FORMULAS.md): what
 * llm/memory.go EstimateGPULayers decides with fs/ggml/ggml.go GraphSize, as in Ollama 0.6.5
 * (the same formulas from 0.5 to 0.12.10 for the architectures below; from 0.11.11 only the
 * models on the llama.cpp runner use it). Every term is Go's own arithmetic: per-layer KV of
 * context x (key + value head sizes) x KV heads x 2 B (1 for q8_0, 0.5 for q4_0), Gemma 3's
 * sliding layers at parallel x window + batch cells, the graph per architecture, the first
 * layer counted once more as a buffer, MinimumMemory per GPU and the projector on GPU 0.
 */
#include "est_ollama.h"

#include <string.h>

/* Go's GraphSize cases, by the GGUF architecture the model would be converted to. */
enum arch { A_OTHER, A_LLAMA, A_GEMMA, A_GEMMA3, A_QWEN2, A_COMMANDR };

static enum arch arch_of(const struct vf_model *m)
{
    static const struct {
        const char *hf;
        enum arch a;
    } map[] = {
        {"llama", A_LLAMA},  {"mistral", A_LLAMA},   {"gemma", A_GEMMA},
        {"gemma2", A_GEMMA}, {"gemma3", A_GEMMA3},   {"gemma3_text", A_GEMMA3},
        {"qwen2", A_QWEN2},  {"cohere", A_COMMANDR}, {"command-r", A_COMMANDR},
    };
    if (!m->model_type || m->n_experts)
        return A_OTHER;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(m->model_type, map[i].hf))
            return map[i].a;
    return A_OTHER;
}

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* GraphSize's full and partial offload graphs; false when the architecture has no case. */
static bool graph(const struct vf_model *m, enum arch a, uint64_t ctx, uint64_t b, uint64_t *full,
                  uint64_t *part)
{
    uint64_t E = m->hidden, H = m->n_heads, Hkv = m->n_kv_heads, V = m->vocab;
    uint64_t Eh = H ? E / H : 0, EhK = m->head_dim;
    switch (a) {
    case A_LLAMA:
        *full = max2(4 * b * (1 + 4 * E + ctx * (1 + H)), 4 * b * (E + V));
        *part = 4 * b * E +
                max2(4 * b * (1 + E + max2(ctx, E)) + E * E * 9 / 16 + 4 * ctx * (b * H + Eh * Hkv),
                     4 * b * (E + V) + E * V * 105 / 128);
        return true;
    case A_GEMMA:
    case A_GEMMA3:
        *full = max2(4 * b * (E + V), 4 * b * (2 + ctx + ctx * H + 2 * E + 2 * EhK * H));
        *part = max2(4 * E * b + E * V * 105 / 128 + 4 * V * b,
                     4 * b * (2 * E + 1 + 2 * EhK * H + ctx + ctx * H) + 4 * EhK * ctx * 8 +
                         E * EhK * H * 9 / 16);
        return true;
    case A_QWEN2:
        *full = max2(4 * b * (E + V), 4 * b * (1 + 2 * E + ctx + ctx * H));
        *part = max2(4 * b * (E + V) + E * V * 105 / 128,
                     4 * (b * (1 + 2 * E + ctx * (1 + H)) + E * (1 + ctx)));
        return true;
    case A_COMMANDR:
        *full = max2(4 * b * (E + V), 4 * b * (2 + 4 * E + ctx * (1 + H)));
        *part = max2(4 * b * (E + V) + E * V * 105 / 128,
                     4 * b * (1 + 2 * E + ctx * (1 + H)) + 4 * E * ctx + E * E * 9 / 16);
        return true;
    default:
        return false;
    }
}

/* KV bytes of block i: context cells, or (Gemma 3) parallel x window + batch cells on the
 * layers that are not every 6th. */
static uint64_t kv_of(const struct vf_model *m, enum arch a, const struct vf_oll_memgo_in *in,
                      uint32_t i)
{
    uint64_t cells = in->context;
    if (a == A_GEMMA3 && (i + 1) % 6 != 0)
        cells = in->parallel * m->sliding_window + in->batch;
    uint64_t per = (uint64_t)(m->head_dim + m->head_dim_v) * m->n_kv_heads;
    return (uint64_t)((double)(cells * per) * in->kv_elem);
}

/* The output layer as memory.go groups it: output_norm + output (token_embd when tied). */
static uint64_t output_bytes(const struct vf_model *m, const struct vf_quant *q)
{
    uint64_t norm = 0, out = 0, embd = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        if (g->layer >= 0)
            continue;
        uint64_t b = vf__quant_group_bytes(m, q, g);
        if (g->cls == VF_T_NORM)
            norm = vf__sat_add(norm, b);
        else if (g->cls == VF_T_OUTPUT)
            out = vf__sat_add(out, b);
        else if (g->cls == VF_T_TOKEN_EMBD)
            embd = vf__sat_add(embd, b);
    }
    return vf__sat_add(norm, out ? out : embd);
}

/* The GPUs memory.go keeps (gpusWithSpace), as indices, with their first allocations. */
static uint32_t gpus_with_space(const struct vf_oll_memgo_in *in, uint64_t graph_max,
                                uint64_t layer0, uint32_t *ws, struct vf_oll_memgo *o)
{
    uint32_t n = 0;
    uint64_t gzo = in->proj_last ? 0 : vf__sat_add(in->proj_weights, in->proj_graph);
    for (uint32_t i = 0; i < in->n_gpus && i < VF_OLL_MAX_GPUS; i++) {
        uint64_t need = in->overhead + (n ? 0 : gzo) + graph_max + in->minimum + 2 * layer0;
        if (in->free[i] < need)
            continue;
        ws[n++] = i;
        o->alloc[i] += in->minimum + layer0;
    }
    if (n)
        o->alloc[ws[0]] += gzo;
    return n;
}

/* One layer of w + kv bytes onto the GPUs from position `at` down (memory.go's round robin,
 * dropping a GPU that has no room); the GPU that keeps it, or -1. */
static int place(const struct vf_oll_memgo_in *in, uint64_t graph_max, uint64_t w, uint64_t kv,
                 uint32_t at, uint32_t *ws, uint32_t *n, struct vf_oll_memgo *o, bool drop)
{
    uint64_t size = w + kv;
    for (uint32_t j = *n; j > 0; j--) {
        uint32_t k = at % j, g = ws[k];
        uint64_t used = o->alloc[g] + graph_max;
        if (in->free[g] > in->overhead + used + size) {
            o->alloc[g] += size;
            o->w_gpu[g] += w;
            o->kv_gpu[g] += kv;
            o->layers_gpu[g]++;
            o->layers++;
            return (int)g;
        }
        if (drop) {
            memmove(ws + k, ws + k + 1, (*n - k - 1) * sizeof *ws);
            (*n)--;
        }
    }
    return -1;
}

void vf__oll_memgo(const struct vf_model *m, const struct vf_oll_memgo_in *in,
                   struct vf_oll_memgo *o)
{
    enum arch a = arch_of(m);
    uint32_t ws[VF_OLL_MAX_GPUS], n;
    memset(o, 0, sizeof *o);
    o->layers_model = m->n_layers + 1;
    for (uint32_t i = 0; i < m->n_layers; i++)
        o->kv = vf__sat_add(o->kv, kv_of(m, a, in, i));
    o->graph_known = graph(m, a, in->context, in->batch, &o->graph_full, &o->graph_partial);
    if (!o->graph_known) { /* memory.go: GQA x the KV total / 6 for both */
        uint64_t gqa = m->n_kv_heads ? m->n_heads / m->n_kv_heads : 1;
        o->graph_partial = o->graph_full = vf__sat_mul(gqa, o->kv) / 6;
    }
    if (in->n_gpus > 1) /* multi-GPU always uses the partial graph */
        o->graph_full = o->graph_partial;
    uint64_t gmax = max2(o->graph_full, o->graph_partial);
    uint64_t layer =
        m->n_layers ? vf_model_layer_weight_bytes(m, in->q, 0) + kv_of(m, a, in, 0) : 0;
    o->layer0 = layer;
    o->weights_output = output_bytes(m, in->q);
    n = gpus_with_space(in, gmax, layer, ws, o);
    uint64_t overflow = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        uint64_t w = vf_model_layer_weight_bytes(m, in->q, (int32_t)i), kv = kv_of(m, a, in, i);
        layer = w + kv;
        o->weights_repeating = vf__sat_add(o->weights_repeating, w);
        if ((in->num_gpu >= 0 && o->layers >= (uint64_t)in->num_gpu) ||
            place(in, gmax, w, kv, i, ws, &n, o, true) < 0) {
            o->w_host = vf__sat_add(o->w_host, w);
            o->kv_host = vf__sat_add(o->kv_host, kv);
        }
    }
    bool full = o->layers >= m->n_layers;
    if (!full) /* memory.go counts the last layer's size for each one left over */
        overflow = vf__sat_mul(layer, m->n_layers - o->layers);
    uint64_t last = o->weights_output; /* commit d7555774 (0.7.1): the projector rides with it */
    if (in->proj_last)
        last = vf__sat_add(last, vf__sat_add(in->proj_weights, in->proj_graph));
    if (last && (in->num_gpu < 0 || o->layers < (uint64_t)in->num_gpu)) {
        uint64_t proj = last - o->weights_output;
        int g = place(in, gmax, o->weights_output, proj, o->layers, ws, &n, o, false);
        if (g < 0)
            o->w_host = vf__sat_add(o->w_host, o->weights_output);
        else /* the projector went with it: in the allocation, not in the KV */
            o->kv_gpu[g] -= proj;
        if (o->layers < m->n_layers + 1) {
            full = false;
            overflow = vf__sat_add(overflow, last);
        }
    }
    for (uint32_t g = 0; g < in->n_gpus && g < VF_OLL_MAX_GPUS; g++) {
        if (o->layers_gpu[g])
            o->alloc[g] += full ? o->graph_full : o->graph_partial;
        o->required_partial = vf__sat_add(o->required_partial, o->alloc[g]);
    }
    o->required_full = vf__sat_add(o->required_partial, overflow);
}
