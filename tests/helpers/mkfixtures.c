/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mkfixtures.c - writes the small model files the golden CLI tests read
 * (tests/golden/inspect-file-*.test), so that they can be made again byte for byte:
 *
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -o /tmp/mkfixtures tests/helpers/mkfixtures.c
 *   /tmp/mkfixtures tests/fixtures/models
 *
 * DIR/tiny-q4km.gguf: a header-only GGUF v3 (no tensor data) of a tiny llama in the types of a
 * Q4_K_M file (general.file_type 15): Q4_K (144 B per 256 elements) for most 2-D weights, Q6_K
 * (210 B per 256) for attn_v, ffn_down and output, F32 norms. hidden 256, 4 heads / 2 KV heads
 * of 64, FFN 512, vocab 1000, 2 layers, context 8192:
 *   token_embd Q4_K 256x1000  256,000 params  144,000 B
 *   output_norm F32 256           256 params    1,024 B
 *   output Q6_K 256x1000      256,000 params  210,000 B
 *   per layer 590,336 params, 376,064 B (norms 2 x 1,024; q, o 2 x 36,864; k 18,432;
 *   v 26,880; gate, up 2 x 73,728; down 107,520)
 *   total 1,692,928 params, 1,107,152 B in 21 tensors.
 *
 * DIR/tiny-st/: config.json of a tiny llama (hidden 32, 2 layers, 2 heads / 1 KV head of 16,
 * FFN 64, vocab 64, tied embeddings, bf16) and model.safetensors with every tensor in BF16 and
 * its (zero) data, so the file is whole (the reader checks the data offsets against its size):
 *   embed_tokens 64x32 = 2,048; per layer q 32x32 1,024 + k, v 16x32 2 x 512 + o 1,024 +
 *   gate, up 64x32 2 x 2,048 + down 32x64 2,048 + norms 2 x 32 = 9,280; final norm 32
 *   total 2,048 + 2 x 9,280 + 32 = 20,640 params, 41,280 B of data.
 *
 * DIR/lone.safetensors: the same tensors with no config.json beside them (inspect shows the
 * parameters and bytes; the architecture, context and KV cache are unknown).
 *
 * DIR/notensors.gguf: the metadata of tiny-q4km.gguf and no tensor at all (the weights'
 * size is unknown: inspect must say so, not print the sentinel).
 */
#include "mkgguf.c"
#include "mksafetensors.c"

#include <sys/stat.h>

static void die(const char *what)
{
    fprintf(stderr, "mkfixtures: cannot write %s\n", what);
    exit(1);
}

/* The metadata of tiny-q4km.gguf, with n_tensors announced in the header. */
static void gguf_meta(struct mkg *w, size_t n_tensors)
{
    mkg_header(w, 3, n_tensors, 13);
    mkg_kv_str(w, "general.architecture", "llama");
    mkg_kv_str(w, "general.name", "tiny-q4km");
    mkg_kv_u32(w, "general.file_type", 15); /* MOSTLY_Q4_K_M */
    mkg_kv_u32(w, "general.alignment", 32);
    mkg_kv_u32(w, "llama.block_count", 2);
    mkg_kv_u32(w, "llama.context_length", 8192);
    mkg_kv_u32(w, "llama.embedding_length", 256);
    mkg_kv_u32(w, "llama.feed_forward_length", 512);
    mkg_kv_u32(w, "llama.attention.head_count", 4);
    mkg_kv_u32(w, "llama.attention.head_count_kv", 2);
    mkg_kv_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    mkg_kv_u32(w, "llama.rope.dimension_count", 64);
    mkg_kv_u32(w, "llama.vocab_size", 1000);
}

static void write_gguf_notensors(const char *dir)
{
    struct mkg w = {0};
    gguf_meta(&w, 0);
    mkg_tensors(&w, NULL, 0, 32, false);
    char p[1024];
    snprintf(p, sizeof p, "%s/notensors.gguf", dir);
    if (mkg_save(&w, p))
        die(p);
    mkg_free(&w);
}

static void write_gguf(const char *dir)
{
    static const struct {
        const char *suffix;
        uint32_t nd;
        uint64_t d0, d1;
        uint32_t type;
    } layer[] = {
        {"attn_norm.weight", 1, 256, 0, 0},      {"attn_q.weight", 2, 256, 256, 12},
        {"attn_k.weight", 2, 256, 128, 12},      {"attn_v.weight", 2, 256, 128, 14},
        {"attn_output.weight", 2, 256, 256, 12}, {"ffn_norm.weight", 1, 256, 0, 0},
        {"ffn_gate.weight", 2, 256, 512, 12},    {"ffn_up.weight", 2, 256, 512, 12},
        {"ffn_down.weight", 2, 512, 256, 14},
    };
    static char names[32][64];
    struct mkg_t ts[32];
    size_t n = 0;
    snprintf(names[n], 64, "token_embd.weight");
    ts[n] = (struct mkg_t){names[n], 2, {256, 1000}, 12};
    n++;
    for (unsigned l = 0; l < 2; l++)
        for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) {
            snprintf(names[n], 64, "blk.%u.%s", l, layer[i].suffix);
            ts[n] =
                (struct mkg_t){names[n], layer[i].nd, {layer[i].d0, layer[i].d1}, layer[i].type};
            n++;
        }
    snprintf(names[n], 64, "output_norm.weight");
    ts[n] = (struct mkg_t){names[n], 1, {256}, 0};
    n++;
    snprintf(names[n], 64, "output.weight");
    ts[n] = (struct mkg_t){names[n], 2, {256, 1000}, 14};
    n++;

    struct mkg w = {0};
    gguf_meta(&w, n);
    mkg_tensors(&w, ts, n, 32, false);
    char p[1024];
    snprintf(p, sizeof p, "%s/tiny-q4km.gguf", dir);
    if (mkg_save(&w, p))
        die(p);
    mkg_free(&w);
}

/* DIR/gemma4-swa.gguf: the metadata of llama.cpp's models/ggml-vocab-gemma-4.gguf (the
 * vocab-only Gemma 4 file in the llama.cpp source node-llama-cpp 3.21.1 bundles), without its
 * tokenizer and with no tensors: 30 layers, every sixth full attention with 2 KV heads of 512,
 * the sliding ones 8 KV heads of key_length_swa = value_length_swa = 256 (issue 21). */
static void write_gemma4(const char *dir)
{
    uint32_t kvh[30];
    unsigned char swa[30];
    for (unsigned l = 0; l < 30; l++) {
        kvh[l] = l % 6 == 5 ? 2 : 8;
        swa[l] = l % 6 != 5;
    }
    struct mkg w = {0};
    mkg_header(&w, 3, 0, 18);
    mkg_kv_str(&w, "general.architecture", "gemma4");
    mkg_kv_str(&w, "general.name", "gemma4-swa");
    mkg_kv_u32(&w, "gemma4.block_count", 30);
    mkg_kv_u32(&w, "gemma4.context_length", 262144);
    mkg_kv_u32(&w, "gemma4.embedding_length", 2816);
    mkg_kv_u32(&w, "gemma4.feed_forward_length", 2112);
    mkg_kv_u32(&w, "gemma4.attention.head_count", 16);
    mkg_kv_arr_u32(&w, "gemma4.attention.head_count_kv", 30, kvh);
    mkg_kv_u32(&w, "gemma4.attention.key_length", 512);
    mkg_kv_u32(&w, "gemma4.attention.value_length", 512);
    mkg_kv_u32(&w, "gemma4.attention.sliding_window", 1024);
    mkg_key(&w, "gemma4.attention.sliding_window_pattern", MKG_ARRAY);
    mkg_arr_head(&w, MKG_BOOL, 30);
    mkg_bytes(&w, swa, 30);
    mkg_kv_u32(&w, "gemma4.attention.key_length_swa", 256);
    mkg_kv_u32(&w, "gemma4.attention.value_length_swa", 256);
    mkg_kv_u32(&w, "gemma4.expert_count", 128);
    mkg_kv_u32(&w, "gemma4.expert_used_count", 8);
    mkg_kv_u32(&w, "gemma4.expert_feed_forward_length", 704);
    mkg_kv_u32(&w, "gemma4.vocab_size", 262144);
    char p[1024];
    snprintf(p, sizeof p, "%s/gemma4-swa.gguf", dir);
    if (mkg_save(&w, p))
        die(p);
    mkg_free(&w);
}

static const char tiny_config[] = "{\n"
                                  "  \"architectures\": [\"LlamaForCausalLM\"],\n"
                                  "  \"model_type\": \"llama\",\n"
                                  "  \"hidden_size\": 32,\n"
                                  "  \"intermediate_size\": 64,\n"
                                  "  \"num_hidden_layers\": 2,\n"
                                  "  \"num_attention_heads\": 2,\n"
                                  "  \"num_key_value_heads\": 1,\n"
                                  "  \"head_dim\": 16,\n"
                                  "  \"vocab_size\": 64,\n"
                                  "  \"max_position_embeddings\": 2048,\n"
                                  "  \"tie_word_embeddings\": true,\n"
                                  "  \"rms_norm_eps\": 1e-05,\n"
                                  "  \"torch_dtype\": \"bfloat16\"\n"
                                  "}\n";

static void write_st(const char *dir)
{
    static const struct {
        const char *suffix;
        unsigned nd;
        uint64_t d0, d1;
    } layer[] = {
        {"input_layernorm.weight", 1, 32, 0},   {"self_attn.q_proj.weight", 2, 32, 32},
        {"self_attn.k_proj.weight", 2, 16, 32}, {"self_attn.v_proj.weight", 2, 16, 32},
        {"self_attn.o_proj.weight", 2, 32, 32}, {"post_attention_layernorm.weight", 1, 32, 0},
        {"mlp.gate_proj.weight", 2, 64, 32},    {"mlp.up_proj.weight", 2, 64, 32},
        {"mlp.down_proj.weight", 2, 32, 64},
    };
    static char names[32][64];
    struct mkst_tensor t[32];
    size_t n = 0;
    snprintf(names[n], 64, "model.embed_tokens.weight");
    t[n] = (struct mkst_tensor){names[n], "BF16", 2, {64, 32}};
    n++;
    for (unsigned l = 0; l < 2; l++)
        for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) {
            snprintf(names[n], 64, "model.layers.%u.%s", l, layer[i].suffix);
            t[n] = (struct mkst_tensor){names[n], "BF16", layer[i].nd, {layer[i].d0, layer[i].d1}};
            n++;
        }
    snprintf(names[n], 64, "model.norm.weight");
    t[n] = (struct mkst_tensor){names[n], "BF16", 1, {32}};
    n++;

    char p[1024];
    snprintf(p, sizeof p, "%s/tiny-st", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/tiny-st/config.json", dir);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(tiny_config, 1, sizeof tiny_config - 1, f) != sizeof tiny_config - 1 ||
        fclose(f))
        die(p);
    snprintf(p, sizeof p, "%s/tiny-st/model.safetensors", dir);
    if (mkst_write(p, t, n, "pt"))
        die(p);
    snprintf(p, sizeof p, "%s/lone.safetensors", dir);
    if (mkst_write(p, t, n, "pt"))
        die(p);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkfixtures DIR\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    write_gguf(argv[1]);
    write_gguf_notensors(argv[1]);
    write_gemma4(argv[1]);
    write_st(argv[1]);
    return 0;
}
