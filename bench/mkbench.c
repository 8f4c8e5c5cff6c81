/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mkbench.c - writes the inputs of bench/inspect.sh with the test fixture writers:
 *
 *   mkbench FILE.gguf DIR
 *
 * FILE.gguf: a header-only GGUF v3 (metadata + tensor infos + padding to the data start, no
 * data) of a 40-layer llama-architecture model with a Qwen-sized byte-level BPE tokenizer:
 * 151,936 token strings, their types and 151,387 merges, and 1,003 tensors (per layer: norms,
 * q/k/v/o, a router and 6 experts stored one tensor each, the layout of early Mixtral GGUFs;
 * Q4_K, Q6_K for attn_v, ffn_down and output, F32 norms).
 *
 * DIR: config.json, model.safetensors.index.json and 100 shards of a Llama-3.1-405B-shaped
 * model (126 layers, 1,137 BF16 tensors); every shard is its header and a sparse data region.
 *
 * The script compiles it: cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L bench/mkbench.c
 */
#include "../tests/helpers/mkgguf.c"
#include "../tests/helpers/mksafetensors.c"

#define N_LAYER   40
#define N_EMBD    5120
#define N_HEAD    40
#define N_HEAD_KV 8
#define HEAD_DIM  128
#define N_EXPERT  6
#define N_FF_EXP  2048
#define N_VOCAB   151936
#define N_MERGES  151387

enum { T_F32 = 0, T_Q4_K = 12, T_Q6_K = 14 };

static uint64_t rng = 0x9e3779b97f4a7c15u;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A token text of 1-12 bytes: printable ASCII, often with the byte-level BPE space mark. */
static size_t token_text(char *s, unsigned i)
{
    static const char al[] = "etaoinshrdlucmfwypvbgkqjxzETAOINSHRDLU0123456789_.,;:-'";
    size_t k = 0;
    if (i < 256) { /* the byte tokens */
        s[k++] = (char)(i < 33 || i > 126 ? 'A' + (int)(i % 26) : (int)i);
        return k;
    }
    if (rnd(3) == 0) {
        s[k++] = (char)0xc4; /* U+0120, "Ġ" */
        s[k++] = (char)0xa0;
    }
    unsigned len = 1 + rnd(10);
    for (unsigned j = 0; j < len; j++)
        s[k++] = al[rnd(sizeof al - 1)];
    return k;
}

static void kv_str_arr_tokens(struct mkg *w)
{
    char s[32];
    mkg_key(w, "tokenizer.ggml.tokens", MKG_ARRAY);
    mkg_arr_head(w, MKG_STRING, N_VOCAB);
    for (unsigned i = 0; i < N_VOCAB; i++) {
        size_t k = token_text(s, i);
        mkg_len(w, k);
        mkg_bytes(w, s, k);
    }
}

static void kv_str_arr_merges(struct mkg *w)
{
    char a[32], b[32], s[80];
    mkg_key(w, "tokenizer.ggml.merges", MKG_ARRAY);
    mkg_arr_head(w, MKG_STRING, N_MERGES);
    for (unsigned i = 0; i < N_MERGES; i++) {
        size_t ka = token_text(a, 256 + i), kb = token_text(b, 256 + i);
        memcpy(s, a, ka);
        s[ka] = ' ';
        memcpy(s + ka + 1, b, kb);
        mkg_len(w, ka + 1 + kb);
        mkg_bytes(w, s, ka + 1 + kb);
    }
}

static const char chat_template[] =
    "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}{%- else %}"
    "{%- for part in message['content'] %}{%- if part['type'] == 'text' %}{{- part['text'] }}"
    "{%- endif %}{%- endfor %}{%- endif %}{{- '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

static int write_gguf(const char *path)
{
    enum { PER_LAYER = 7 + 3 * N_EXPERT, N_T = 3 + N_LAYER * PER_LAYER };
    static struct mkg_t ts[N_T];
    static char names[N_T][48];
    size_t n = 0;
#define T(t, a, b, ...)                                                   \
    do {                                                                  \
        snprintf(names[n], sizeof names[n], __VA_ARGS__);                 \
        ts[n] = (struct mkg_t){names[n], (b) ? 2u : 1u, {(a), (b)}, (t)}; \
        n++;                                                              \
    } while (0)
    T(T_Q4_K, N_EMBD, N_VOCAB, "token_embd.weight");
    for (int l = 0; l < N_LAYER; l++) {
        T(T_F32, N_EMBD, 0, "blk.%d.attn_norm.weight", l);
        T(T_Q4_K, N_EMBD, N_HEAD * HEAD_DIM, "blk.%d.attn_q.weight", l);
        T(T_Q4_K, N_EMBD, N_HEAD_KV * HEAD_DIM, "blk.%d.attn_k.weight", l);
        T(T_Q6_K, N_EMBD, N_HEAD_KV * HEAD_DIM, "blk.%d.attn_v.weight", l);
        T(T_Q4_K, N_HEAD * HEAD_DIM, N_EMBD, "blk.%d.attn_output.weight", l);
        T(T_F32, N_EMBD, 0, "blk.%d.ffn_norm.weight", l);
        T(T_F32, N_EMBD, N_EXPERT, "blk.%d.ffn_gate_inp.weight", l);
        for (int e = 0; e < N_EXPERT; e++) {
            T(T_Q4_K, N_EMBD, N_FF_EXP, "blk.%d.ffn_gate.%d.weight", l, e);
            T(T_Q6_K, N_FF_EXP, N_EMBD, "blk.%d.ffn_down.%d.weight", l, e);
            T(T_Q4_K, N_EMBD, N_FF_EXP, "blk.%d.ffn_up.%d.weight", l, e);
        }
    }
    T(T_F32, N_EMBD, 0, "output_norm.weight");
    T(T_Q6_K, N_EMBD, N_VOCAB, "output.weight");
#undef T

    struct mkg w = {0};
    mkg_header(&w, 3, n, 27);
    mkg_kv_str(&w, "general.architecture", "llama");
    mkg_kv_str(&w, "general.name", "vramfit bench 40L 6x MoE, 151936-token vocab");
    mkg_kv_u32(&w, "general.file_type", 15); /* MOSTLY_Q4_K_M */
    mkg_kv_u32(&w, "general.quantization_version", 2);
    mkg_kv_u32(&w, "llama.block_count", N_LAYER);
    mkg_kv_u32(&w, "llama.context_length", 32768);
    mkg_kv_u32(&w, "llama.embedding_length", N_EMBD);
    mkg_kv_u32(&w, "llama.feed_forward_length", N_FF_EXP);
    mkg_kv_u32(&w, "llama.attention.head_count", N_HEAD);
    mkg_kv_u32(&w, "llama.attention.head_count_kv", N_HEAD_KV);
    mkg_kv_f32(&w, "llama.attention.layer_norm_rms_epsilon", 1e-6f);
    mkg_kv_f32(&w, "llama.rope.freq_base", 1000000.0f);
    mkg_kv_u32(&w, "llama.rope.dimension_count", HEAD_DIM);
    mkg_kv_u32(&w, "llama.vocab_size", N_VOCAB);
    mkg_kv_u32(&w, "llama.expert_count", N_EXPERT);
    mkg_kv_u32(&w, "llama.expert_used_count", 2);
    mkg_kv_str(&w, "tokenizer.ggml.model", "gpt2");
    mkg_kv_str(&w, "tokenizer.ggml.pre", "qwen2");
    kv_str_arr_tokens(&w);
    mkg_key(&w, "tokenizer.ggml.token_type", MKG_ARRAY);
    mkg_arr_head(&w, MKG_I32, N_VOCAB);
    for (unsigned i = 0; i < N_VOCAB; i++)
        mkg_uint(&w, i >= 151643 ? 3 : 1, 4); /* the last ones are control tokens */
    kv_str_arr_merges(&w);
    mkg_kv_u32(&w, "tokenizer.ggml.bos_token_id", 151643);
    mkg_kv_u32(&w, "tokenizer.ggml.eos_token_id", 151645);
    mkg_kv_u32(&w, "tokenizer.ggml.padding_token_id", 151643);
    mkg_kv_bool(&w, "tokenizer.ggml.add_bos_token", false);
    mkg_kv_str(&w, "tokenizer.chat_template", chat_template);
    mkg_kv_u32(&w, "general.alignment", 32);
    mkg_tensors(&w, ts, n, 32, false);
    int rc = mkg_save(&w, path);
    fprintf(stderr, "mkbench: %s: %zu tensors, %zu header bytes\n", path, n, w.n);
    mkg_free(&w);
    return rc;
}

/* Llama-3.1-405B's shapes; 100 shards instead of its 191. */
#define S_LAYER  126
#define S_EMBD   16384
#define S_FF     53248
#define S_KV     (8 * 128)
#define S_VOCAB  128256
#define S_SHARDS 100

static int write_safetensors(const char *dir)
{
    enum { N_T = 3 + 9 * S_LAYER };
    static struct mkst_tensor ts[N_T];
    static char names[N_T][64];
    size_t n = 0;
#define T(a, b, ...)                                                               \
    do {                                                                           \
        snprintf(names[n], sizeof names[n], __VA_ARGS__);                          \
        ts[n] = (struct mkst_tensor){names[n], "BF16", (b) ? 2u : 1u, {(a), (b)}}; \
        n++;                                                                       \
    } while (0)
    T(S_VOCAB, S_EMBD, "model.embed_tokens.weight");
    for (int l = 0; l < S_LAYER; l++) {
        T(S_EMBD, 0, "model.layers.%d.input_layernorm.weight", l);
        T(S_EMBD, S_EMBD, "model.layers.%d.self_attn.q_proj.weight", l);
        T(S_KV, S_EMBD, "model.layers.%d.self_attn.k_proj.weight", l);
        T(S_KV, S_EMBD, "model.layers.%d.self_attn.v_proj.weight", l);
        T(S_EMBD, S_EMBD, "model.layers.%d.self_attn.o_proj.weight", l);
        T(S_EMBD, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        T(S_FF, S_EMBD, "model.layers.%d.mlp.gate_proj.weight", l);
        T(S_FF, S_EMBD, "model.layers.%d.mlp.up_proj.weight", l);
        T(S_EMBD, S_FF, "model.layers.%d.mlp.down_proj.weight", l);
    }
    T(S_EMBD, 0, "model.norm.weight");
    T(S_VOCAB, S_EMBD, "lm_head.weight");
#undef T

    static const char config[] =
        "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
        "  \"hidden_size\": 16384,\n  \"intermediate_size\": 53248,\n"
        "  \"num_hidden_layers\": 126,\n  \"num_attention_heads\": 128,\n"
        "  \"num_key_value_heads\": 8,\n  \"head_dim\": 128,\n  \"vocab_size\": 128256,\n"
        "  \"max_position_embeddings\": 131072,\n  \"rms_norm_eps\": 1e-05,\n"
        "  \"rope_theta\": 500000.0,\n  \"rope_scaling\": {\"factor\": 8.0, "
        "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
        "\"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"},\n"
        "  \"hidden_act\": \"silu\",\n  \"tie_word_embeddings\": false,\n"
        "  \"torch_dtype\": \"bfloat16\",\n  \"bos_token_id\": 128000,\n"
        "  \"eos_token_id\": [128001, 128008, 128009]\n}\n";
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(config, 1, sizeof config - 1, f) != sizeof config - 1 || fclose(f) != 0)
        return -1;
    int rc = mkst_write_sharded(dir, ts, n, S_SHARDS);
    fprintf(stderr, "mkbench: %s: %zu tensors in %d shards\n", dir, n, S_SHARDS);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mkbench FILE.gguf DIR\n");
        return 2;
    }
    if (write_gguf(argv[1]) != 0 || write_safetensors(argv[2]) != 0) {
        perror("mkbench");
        return 1;
    }
    return 0;
}
