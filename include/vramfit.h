/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vramfit.h - the one public header of libvramfit.
 *
 * libvramfit answers two questions: "why did this job run out of GPU memory" and
 * "will this workload fit, and on which card is it cheapest". The CLI (`vramfit`)
 * and the HTTP server include nothing but this file.
 *
 * Rules that hold for every function declared here:
 *  - A fallible function returns enum vf_err, with VF_OK == 0, so `if (rc) return rc;`
 *    works. Its last parameter is a `struct vf_error *` that may be NULL; on failure it
 *    receives a message that says what failed, on what, and where (file, line, offset).
 *  - A function that allocates takes a `struct vf_arena *` first. Everything reachable
 *    from its outputs lives in that arena and dies with vf_arena_close().
 *  - The library never prints, never exits and never aborts on bad input.
 *  - Bytes are uint64_t; an unknown byte count is VF_UNKNOWN, never 0.
 *  - Money is an integer number of micro-units of the offer's currency per hour.
 */
#ifndef VRAMFIT_H
#define VRAMFIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VF_VERSION "0.1.0"

/* An unknown byte count or token count. Renderers print "?" or JSON null. */
#define VF_UNKNOWN UINT64_MAX

/* ------------------------------------------------------------------ errors */

/* X(name, message): one list generates the enum, the names and the messages. */
#define VF_ERR_MAP(X)                 \
    X(OK, "success")                  \
    X(NOMEM, "out of memory")         \
    X(IO, "input/output error")       \
    X(NOENT, "not found")             \
    X(FORMAT, "malformed input")      \
    X(UNSUPPORTED, "not supported")   \
    X(RANGE, "number out of range")   \
    X(INVAL, "invalid argument")      \
    X(LIMIT, "input exceeds a limit") \
    X(NODEV, "no GPU found")          \
    X(USAGE, "bad option or argument")

enum vf_err {
#define VF__ERR_ENUM(name, msg) VF_E##name,
    VF_ERR_MAP(VF__ERR_ENUM)
#undef VF__ERR_ENUM
        VF_ERR__COUNT
};
#define VF_OK VF_EOK

#define VF_ERROR_MSG_MAX 512

struct vf_error {
    enum vf_err code;
    char msg[VF_ERROR_MSG_MAX];
};

/* "FORMAT", "NOENT", ...: static text, never NULL. */
const char *vf_err_name(enum vf_err code);
/* "malformed input", ...: static text, never NULL. */
const char *vf_strerror(enum vf_err code);

/* ------------------------------------------------------ allocator and arena */

/* Every allocation of the library goes through these hooks (tests inject failures). */
struct vf_allocator {
    void *(*malloc)(size_t n, void *ud);
    void *(*realloc)(void *p, size_t n, void *ud);
    void (*free)(void *p, void *ud);
    void *ud;
};
/* Replace the allocator; NULL restores malloc/realloc/free. Call before anything else. */
void vf_set_allocator(const struct vf_allocator *a);

struct vf_arena;
/* An arena that hands out at most limit_bytes (0 = VF_ARENA_DEFAULT_LIMIT). */
#define VF_ARENA_DEFAULT_LIMIT ((size_t)1 << 30)
struct vf_arena *vf_arena_open(size_t limit_bytes);
void vf_arena_close(struct vf_arena *a); /* NULL is a no-op */
/* Zeroed, 16-byte aligned memory; NULL when the allocator or the limit says no. */
void *vf_arena_alloc(struct vf_arena *a, size_t n);
char *vf_arena_strdup(struct vf_arena *a, const char *s);
char *vf_arena_strndup(struct vf_arena *a, const char *s, size_t n);
char *vf_arena_printf(struct vf_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* -------------------------------------------------------------------- units */

/*
 * Sizes: "24GiB", "24G" (= GiB), "24GB" (= 10^9), "24576MiB", "23.65 GiB", "1024" (bytes),
 * "512KiB", "1.5TB". Decimal fractions are exact to the byte (rounded half up).
 */
enum vf_err vf_parse_bytes(const char *s, uint64_t *out, struct vf_error *err);
/* Token counts: "32k" = "32K" = 32768, "128K", "131072", "1M" = 1048576. */
enum vf_err vf_parse_tokens(const char *s, uint64_t *out, struct vf_error *err);
/* A decimal price "0.59" into micro-units (590000); at most 6 decimals. */
enum vf_err vf_parse_price(const char *s, uint64_t *out_micro, struct vf_error *err);
/* A plain unsigned decimal count ("4"), nothing else. */
enum vf_err vf_parse_count(const char *s, uint64_t *out, struct vf_error *err);

#define VF_FMT_IEC   0u /* "23.65 GiB" (binary units, 2 decimals) */
#define VF_FMT_SI    1u /* "25.39 GB" (decimal units, 2 decimals) */
#define VF_FMT_EXACT 2u /* "25393692672" */
/* Formats bytes into buf (cap >= 32 recommended); VF_UNKNOWN prints "?". Returns buf. */
char *vf_format_bytes(char *buf, size_t cap, uint64_t bytes, unsigned flags);
/* Formats a signed byte difference with a leading '-' when negative. */
char *vf_format_sbytes(char *buf, size_t cap, int64_t bytes);
/* Formats micro-units with `decimals` decimals (2 for per hour, 4 for per minute). */
char *vf_format_price(char *buf, size_t cap, uint64_t micro, int decimals);
/* Formats a token count: 32768 -> "32k" when it is a whole multiple of 1024, else digits. */
char *vf_format_tokens(char *buf, size_t cap, uint64_t tokens);

/* ------------------------------------------------------------- data types */

/*
 * Storage types of weights and KV cache. Every byte size is an exact rational:
 * block_bytes per block_elems elements, plus per-group scale overhead for formats
 * that carry one (AWQ/GPTQ, NF4, FP8 block scales). GGUF types follow ggml's table.
 */
#define VF_DTYPE_MAP(X)                                 \
    /* id        name        block_elems block_bytes */ \
    X(F32, "fp32", 1, 4)                                \
    X(F16, "fp16", 1, 2)                                \
    X(BF16, "bf16", 1, 2)                               \
    X(FP8, "fp8", 1, 1)                                 \
    X(INT8, "int8", 1, 1)                               \
    X(INT4, "int4", 2, 1)                               \
    X(NF4, "nf4", 2, 1)                                 \
    X(MXFP4, "mxfp4", 32, 17)                           \
    X(NVFP4, "nvfp4", 16, 9)                            \
    X(Q4_0, "q4_0", 32, 18)                             \
    X(Q4_1, "q4_1", 32, 20)                             \
    X(Q5_0, "q5_0", 32, 22)                             \
    X(Q5_1, "q5_1", 32, 24)                             \
    X(Q8_0, "q8_0", 32, 34)                             \
    X(Q8_1, "q8_1", 32, 36)                             \
    X(Q2_K, "q2_k", 256, 84)                            \
    X(Q3_K, "q3_k", 256, 110)                           \
    X(Q4_K, "q4_k", 256, 144)                           \
    X(Q5_K, "q5_k", 256, 176)                           \
    X(Q6_K, "q6_k", 256, 210)                           \
    X(Q8_K, "q8_k", 256, 292)                           \
    X(IQ2_XXS, "iq2_xxs", 256, 66)                      \
    X(IQ2_XS, "iq2_xs", 256, 74)                        \
    X(IQ2_S, "iq2_s", 256, 82)                          \
    X(IQ3_XXS, "iq3_xxs", 256, 98)                      \
    X(IQ3_S, "iq3_s", 256, 110)                         \
    X(IQ1_S, "iq1_s", 256, 50)                          \
    X(IQ1_M, "iq1_m", 256, 56)                          \
    X(IQ4_NL, "iq4_nl", 32, 18)                         \
    X(IQ4_XS, "iq4_xs", 256, 136)                       \
    X(TQ1_0, "tq1_0", 256, 54)                          \
    X(TQ2_0, "tq2_0", 256, 66)

enum vf_dtype {
    VF_DT_DEFAULT = 0, /* "whatever the model/engine uses by default" */
#define VF__DT_ENUM(id, name, be, bb) VF_DT_##id,
    VF_DTYPE_MAP(VF__DT_ENUM)
#undef VF__DT_ENUM
        VF_DT__COUNT
};

/* "bf16", "q4_k", ...; "default" for VF_DT_DEFAULT. */
const char *vf_dtype_name(enum vf_dtype t);
/* Elements per block and bytes per block (exact rational bytes per element). */
void vf_dtype_block(enum vf_dtype t, uint32_t *elems, uint32_t *bytes);
/* Bytes of n elements stored as t (blocks rounded up), VF_UNKNOWN on overflow. */
uint64_t vf_dtype_bytes(enum vf_dtype t, uint64_t n);

/*
 * A weight storage scheme: a plain dtype, a quantization method with its group size
 * (AWQ/GPTQ int4 g128 carry an fp16 scale + zero per group), or a GGUF file type
 * (Q4_K_M: a recipe that puts different types on different tensors).
 */
enum vf_quant_kind {
    VF_QK_NATIVE = 0, /* the checkpoint's own storage (default) */
    VF_QK_PLAIN,      /* every linear weight in `dtype`, the rest 16-bit */
    VF_QK_AWQ,        /* int4, group 128, fp16 scale + packed zero per group */
    VF_QK_GPTQ,       /* int4, group 128, fp16 scale + packed zero per group */
    VF_QK_NF4,        /* bitsandbytes NF4, block 64, double-quantized absmax */
    VF_QK_FP8_BLOCK,  /* FP8 e4m3 with 128x128 fp32 block scales (DeepSeek-V3) */
    VF_QK_GGUF_FTYPE  /* a llama.cpp file type recipe (Q4_K_M, Q8_0, ...) */
};

struct vf_quant {
    enum vf_quant_kind kind;
    enum vf_dtype dtype; /* PLAIN: the dtype; GGUF_FTYPE: the ftype's base type */
    int ftype;           /* GGUF_FTYPE: llama.cpp's LLAMA_FTYPE_* number */
    uint32_t group;      /* AWQ/GPTQ group size, NF4 block size */
    /* Bit mask of (1u << enum vf_tclass) the scheme quantizes; 0 = its default set (every
     * linear weight in the layers). gpt-oss's native MXFP4 covers only the experts. */
    uint32_t classes;
    char name[24]; /* as the user wrote it, normalized: "Q4_K_M", "awq", "bf16" */
};

/* Parses --weights/--quant: fp32|bf16|fp16|fp8|int8|int4|awq|gptq|nf4|mxfp4|nvfp4|<GGUF
 * type or ftype>. Case-insensitive. VF_EINVAL with the accepted forms on anything else. */
enum vf_err vf_quant_parse(const char *s, struct vf_quant *out, struct vf_error *err);
/* Parses a KV cache dtype: fp16|bf16|fp8|fp8_e4m3|fp8_e5m2|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl|f32.*/
enum vf_err vf_kv_dtype_parse(const char *s, enum vf_dtype *out, struct vf_error *err);

/* ------------------------------------------------------------------- models */

/* What a workload does: LLM inference, training/fine-tuning, image or video generation. */
enum vf_task { VF_TASK_INFER = 0, VF_TASK_TRAIN, VF_TASK_IMAGE, VF_TASK_VIDEO };
const char *vf_task_name(enum vf_task t);

enum vf_provenance {
    VF_PROV_EXACT = 0, /* from the weights' own headers */
    VF_PROV_CONFIG,    /* from a config.json */
    VF_PROV_CATALOG,   /* from the built-in catalog */
    VF_PROV_ASSUMED    /* a default we chose */
};
const char *vf_provenance_name(enum vf_provenance p);

enum vf_attn_kind { VF_ATTN_MHA = 0, VF_ATTN_GQA, VF_ATTN_MQA, VF_ATTN_MLA };
const char *vf_attn_kind_name(enum vf_attn_kind k);

/* What a layer holds. Only ATTN_FULL and ATTN_SLIDING layers keep a KV cache. */
enum vf_layer_kind {
    VF_LAYER_ATTN_FULL = 0,
    VF_LAYER_ATTN_SLIDING, /* keeps at most sliding_window tokens where the engine caps it */
    VF_LAYER_RECURRENT,    /* Mamba / linear attention: a fixed state per sequence */
    VF_LAYER_MLP_ONLY      /* a block with no token mixer (Nemotron-H '-' blocks) */
};

/* Tensor classes, the unit of quantization recipes and of layer offload. */
enum vf_tclass {
    VF_T_TOKEN_EMBD = 0,
    VF_T_OUTPUT,   /* lm_head (absent when tied) */
    VF_T_NORM,     /* every norm weight/bias (kept at high precision by every scheme) */
    VF_T_ATTN_Q,   /* incl. MLA q_a/q_b */
    VF_T_ATTN_K,   /* incl. MLA kv_a (latent + rope) */
    VF_T_ATTN_V,   /* incl. MLA kv_b */
    VF_T_ATTN_QKV, /* fused qkv where the checkpoint fuses it */
    VF_T_ATTN_O,
    VF_T_FFN_GATE,
    VF_T_FFN_UP,
    VF_T_FFN_DOWN,
    VF_T_FFN_GATE_EXP, /* routed experts, all of them */
    VF_T_FFN_UP_EXP,
    VF_T_FFN_DOWN_EXP,
    VF_T_FFN_GATE_SHEXP, /* shared experts */
    VF_T_FFN_UP_SHEXP,
    VF_T_FFN_DOWN_SHEXP,
    VF_T_ROUTER,
    VF_T_SSM,  /* recurrent mixer projections (in/out proj, conv, A, D, dt) */
    VF_T_BIAS, /* linear biases, attention sinks: tiny, kept at 16/32 bit */
    VF_T_OTHER,
    VF_T__COUNT
};
const char *vf_tclass_name(enum vf_tclass c);

/* A group of tensors of one class in one layer (layer -1: not in a layer). */
struct vf_tgroup {
    enum vf_tclass cls;
    int32_t layer;
    uint64_t n_params;  /* elements in the group */
    uint64_t row_elems; /* length of the rows that quantization blocks run along */
    uint32_t n_tensors; /* tensors folded into the group (experts count one each) */
    /* Bytes as a file stores the group (GGUF, safetensors); 0 = not read from a file.
     * The native scheme (VF_QK_NATIVE) counts these when set. */
    uint64_t stored_bytes;
};

#define VF_MAX_LAYERS 1024

/* An image or video generation pipeline (transformer/UNet, text encoders, VAE). */
struct vf_pipeline;
struct vf_tensor_info;
struct vf__memo;   /* library-internal (src/lib/internal.h) */
struct vf__shared; /* library-internal (src/lib/internal.h) */

struct vf_model {
    const char *id;                     /* "meta-llama/Llama-3.1-8B-Instruct" or the path given */
    enum vf_task task;                  /* what the model does by default: infer, image, video */
    const struct vf_pipeline *pipeline; /* image/video models; NULL for LLMs */
    const char *name;                   /* "Llama 3.1 8B Instruct" */
    const char *alias;                  /* "llama-3.1-8b" or NULL */
    const char *model_type;             /* HF model_type: "llama", "qwen3_moe", ... */
    const char *source;                 /* where the numbers came from (file, catalog file) */
    enum vf_provenance provenance;

    uint32_t n_layers;
    uint32_t hidden;
    uint32_t intermediate;
    uint32_t n_heads;
    uint32_t n_kv_heads; /* for MLA: the config's value, not what is cached */
    uint32_t head_dim;   /* key/query head size */
    uint32_t head_dim_v; /* value head size (= head_dim unless the config says) */
    /* issue 21: K and V head sizes of the sliding-window layers when they differ (GGUF
     * attention.key_length_swa / value_length_swa, Gemma 4); 0 = head_dim / head_dim_v */
    uint32_t head_dim_swa, head_dim_v_swa;
    uint64_t vocab;
    uint64_t max_ctx_tokens;
    bool tied_embeddings;
    /* issue 21: an encoder-only model (BERT-style: bert, roberta, nomic-bert, ...): no causal
     * decoding and no KV cache; the LLM estimators refuse it with the reason */
    bool encoder_only;
    /* issue 21: the vision encoder of a multimodal model (config.json vision_config), what an
     * engine loads as its projector (Ollama's mmproj); all 0 for a text-only model */
    struct {
        uint32_t hidden, layers, ffn, heads, image, patch;
    } vision;

    enum vf_attn_kind attn;
    uint32_t kv_lora_rank, q_lora_rank, qk_rope_dim, qk_nope_dim, v_head_dim_mla;

    uint8_t *layer_kind;      /* n_layers entries of enum vf_layer_kind */
    uint32_t *layer_kv_heads; /* n_layers entries, or NULL = n_kv_heads everywhere */
    uint32_t sliding_window;  /* tokens, 0 = none */

    uint32_t n_experts, n_experts_used, n_shared_experts;
    uint32_t moe_intermediate, shared_intermediate;
    uint32_t first_k_dense; /* layers before the first MoE layer */
    uint32_t moe_every;     /* MoE every N-th layer after first_k_dense (1 = all) */

    /* Per-sequence recurrent state of RECURRENT layers, at 16-bit (F-KV-05). */
    uint64_t recurrent_state_bytes;

    uint64_t params;        /* total parameters (F-PAR-01) */
    uint64_t params_active; /* per token for MoE (F-PAR-02); = params when dense */

    struct vf_tgroup *groups; /* every weight of the model, by class and layer */
    size_t n_groups;

    /* How the checkpoint stores its weights (quantization_config, torch_dtype). */
    struct vf_quant native;
    enum vf_dtype native_dtype; /* torch_dtype: BF16/F16/F32 */
    /* Weight bytes read from the files themselves (VF_UNKNOWN when not read). */
    uint64_t exact_weight_bytes;
    /* The tensors of the files read (GGUF, safetensors); NULL when none was read. */
    const struct vf_tensor_info *tensors;
    size_t n_tensors;
    /* Library-internal (issue 15): what the solver remembers during one call of vf_fit or
     * vf_pick (weight bytes per storage), set on the solver's own copy of the model only;
     * NULL everywhere else. Callers leave it NULL. */
    struct vf__memo *memo;
    /* Library-internal: the weight sums the requests of a server share, set by
     * vf_catalog_preload on the catalog's parsed models; NULL everywhere else. */
    struct vf__shared *shared;
};

/* ---------------------------------------------------------------- catalog */

struct vf_gpu_spec {
    const char *id;        /* "rtx-4090" */
    const char *name;      /* "GeForce RTX 4090" */
    const char *vendor;    /* "NVIDIA" */
    uint32_t marketed_gb;  /* 24 */
    uint64_t smi_bytes;    /* total as nvidia-smi prints it (VF_UNKNOWN if not known) */
    uint64_t usable_bytes; /* what CUDA reports as total (PyTorch "total capacity") */
    bool usable_derived;   /* true: smi total minus the driver reservation, not measured */
    uint32_t bandwidth_gbps;
    const char *arch; /* "Ada Lovelace" */
    const char *cc;   /* "8.9", or "" */
    bool bf16, fp8, fp4;
    const char *source;
    /* Dense tensor throughput (no sparsity), TFLOPS (TOPS for int8); 0 = unknown or none.
     * fp16: FP16 accumulate; bf16: FP32 accumulate (GeForce runs it at half the fp16 rate). */
    double tflops_fp16, tflops_bf16, tflops_fp8, tflops_int8, tflops_fp4;
    uint8_t pcie_gen, pcie_lanes; /* 0 = unknown */
    int32_t nvlink_gbps;          /* GB/s per card; 0 none, -1 unknown or an optional bridge */
    uint32_t sms;                 /* streaming multiprocessors; 0 = unknown */
    double boost_mhz;             /* boost clock, MHz; 0 = unknown */
    double tdp_w;                 /* board power limit, W; 0 = unknown (F-SPD-07) */
    const char *speed_source;     /* where the compute figures come from ("" when none) */
};

struct vf_offer {
    const char *gpu_id;
    uint32_t count;
    uint64_t price_micro; /* per hour, for `count` cards together */
    char currency[4];     /* "EUR" */
    const char *billing;  /* "minute", "second", "hour" */
    const char *kind;     /* "on-demand", "spot", "serverless-flex", ... */
    const char *as_of;    /* "2026-11" */
    const char *provider;
    const char *source;
    bool derived;       /* count > 1 priced as count x the same provider's single-card price of the
                         * same kind and currency (computed when the catalog loads), not a quote */
    const char *origin; /* "built-in", or the --data-dir prices.tsv it comes from */
};

/* One model of the catalog: where its config lives (parsed on demand). */
struct vf_catalog_model {
    const char *id;
    const char *alias;
    const char *name;
    const char *file;              /* "models/llama-3.1-8b.json" */
    uint64_t params_ref;           /* the published exact parameter count, VF_UNKNOWN if none */
    enum vf_task task;             /* infer (an LLM config) or image/video (a pipeline file) */
    const struct vf_model *loaded; /* parsed by vf_catalog_preload, else NULL */
};

struct vf_catalog {
    struct vf_gpu_spec *gpus;
    size_t n_gpus;
    struct vf_offer *offers;
    size_t n_offers;
    struct vf_catalog_model *models;
    size_t n_models;
    const char *data_dir; /* NULL: the embedded copy */
    struct vf_arena *arena;
};

/*
 * Loads the catalog: from data_dir when non-NULL (gpus.tsv, prices.tsv, models/), else
 * from the copy embedded in the library. A bad row is an error that names the file, the
 * line and the column. Close with vf_catalog_close().
 */
enum vf_err vf_catalog_open(struct vf_catalog **out, const char *data_dir, struct vf_error *err);
/* The parts of the catalog vf_catalog_open_parts reads; offers need the cards. */
enum { VF_CATALOG_GPUS = 1, VF_CATALOG_OFFERS = 2, VF_CATALOG_MODELS = 4, VF_CATALOG_ALL = 7 };
/* As vf_catalog_open, reading only `parts` (an estimate needs no offers): the rest is empty. */
enum vf_err vf_catalog_open_parts(struct vf_catalog **out, const char *data_dir, unsigned parts,
                                  struct vf_error *err);
void vf_catalog_close(struct vf_catalog *c);
/* Parses every model of c once (a server's requests then share them, read-only): after it,
 * vf_model_resolve of a catalog model copies the parsed one instead of reading its file. A
 * model whose file does not parse is left out (vf_model_resolve reports it when asked for
 * it); the error is only running out of memory. Not thread-safe: call it before sharing c. */
enum vf_err vf_catalog_preload(struct vf_catalog *c, struct vf_error *err);
/* Case-insensitive lookup by id, by name, or by an unambiguous alias: whole words of one
 * card's id or name ("4090"; never a prefix such as "rtx-409"). NULL if none or several. */
const struct vf_gpu_spec *vf_catalog_gpu(const struct vf_catalog *c, const char *ref);
/* Cards whose id or name holds ref's words whole and in order (the candidates of an
 * ambiguous alias); returns the count. */
size_t vf_catalog_gpu_suggest(const struct vf_catalog *c, const char *ref,
                              const struct vf_gpu_spec **out, size_t cap);
/* Case-insensitive lookup of a model by HF id or alias, or an Ollama tag naming it
 * ("qwen3:32b"). NULL if none. */
const struct vf_catalog_model *vf_catalog_model(const struct vf_catalog *c, const char *ref);
/* Fills out[0..cap) with the catalog models closest to ref (edit distance); returns count. */
size_t vf_catalog_suggest(const struct vf_catalog *c, const char *ref,
                          const struct vf_catalog_model **out, size_t cap);
/* The raw bytes of a catalog file ("models/x.json"); NULL + *len 0 if absent. */
const char *vf_catalog_file(struct vf_arena *a, const struct vf_catalog *c, const char *name,
                            size_t *len, struct vf_error *err);

/*
 * Resolves a model reference (catalog id or alias; issue 3 adds files and the hub) into
 * a model in arena `a`. VF_ENOENT for an unknown reference, with suggestions in err.
 */
enum vf_err vf_model_resolve(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                             struct vf_model *out, struct vf_error *err);
/* Parses a HF config.json text into a model (provenance CONFIG). `origin` names the file
 * in error messages. */
enum vf_err vf_model_from_config(struct vf_arena *a, const char *json, size_t len,
                                 const char *origin, struct vf_model *out, struct vf_error *err);
/* Weight bytes of the model stored as q (F-W-01..); VF_UNKNOWN on overflow. */
uint64_t vf_model_weight_bytes(const struct vf_model *m, const struct vf_quant *q);
/* Weight bytes of the tensors of one layer (-1: outside layers), as q stores them. */
uint64_t vf_model_layer_weight_bytes(const struct vf_model *m, const struct vf_quant *q,
                                     int32_t layer);
/* KV cache bytes per token per sequence at context ctx (sliding layers capped at their
 * window when cap_sliding), with K and V stored as kv (F-KV-01..04). */
uint64_t vf_model_kv_bytes_per_token(const struct vf_model *m, enum vf_dtype kv);
uint64_t vf_model_kv_bytes(const struct vf_model *m, enum vf_dtype kv, uint64_t ctx,
                           bool cap_sliding);

/* ------------------------------------------------------ workload, estimate */

/* Training (--task train): the method, optimizer and parallelism of a fine-tuning run. */
enum vf_train_method { VF_TRAIN_FULL = 0, VF_TRAIN_LORA, VF_TRAIN_QLORA, VF_TRAIN_FREEZE };
enum vf_optimizer {
    VF_OPT_ADAMW = 0,
    VF_OPT_ADAMW8BIT,
    VF_OPT_SGD,
    VF_OPT_PAGED_ADAMW8BIT,
    VF_OPT_ADAFACTOR,
    VF_OPT_LION
};
/* bf16/fp16 = mixed precision (16-bit weights and gradients, fp32 master copy and states);
 * pure-bf16 = no fp32 anywhere (torchtune, LLaMA-Factory --pure_bf16). */
enum vf_precision { VF_PREC_BF16 = 0, VF_PREC_FP16, VF_PREC_FP32, VF_PREC_PURE_BF16 };
/* VF_GC_OFFLOAD: full recomputation with the saved layer inputs in host RAM (Unsloth's
 * use_gradient_checkpointing="unsloth", torchtune enable_activation_offloading). */
enum vf_grad_ckpt { VF_GC_NONE = 0, VF_GC_FULL, VF_GC_SELECTIVE, VF_GC_OFFLOAD };
/* ZeRO stage; AUTO (zero-initialized) = stage 3 (FSDP full shard) on several GPUs. */
enum vf_zero { VF_ZERO_AUTO = 0, VF_ZERO_0, VF_ZERO_1, VF_ZERO_2, VF_ZERO_3 };
/* FSDP sharding strategies, the ZeRO stages in PyTorch's words (NONE: not given). */
enum vf_fsdp {
    VF_FSDP_NONE = 0,
    VF_FSDP_FULL_SHARD,
    VF_FSDP_SHARD_GRAD_OP,
    VF_FSDP_HYBRID_SHARD,
    VF_FSDP_NO_SHARD
};
enum vf_offload { VF_OFFLOAD_NONE = 0, VF_OFFLOAD_OPTIMIZER, VF_OFFLOAD_PARAMS };
/* Model-state accounting: the ZeRO paper's (16 B/param with AdamW, the default) or
 * DeepSpeed's estimator (fp32 gradients, 18 B/param; its offload buffer factors). */
enum vf_accounting { VF_ACCT_ZERO = 0, VF_ACCT_DEEPSPEED };

/* --- issue 22: the training stacks whose defaults --framework applies (0 = the default stack,
 * trl). The VF_TK_* bits of vf_train_opts.given mark knobs set explicitly, which a preset
 * leaves alone. */
enum vf_framework {
    VF_FW_DEFAULT = 0,
    VF_FW_HF,
    VF_FW_TRL,
    VF_FW_UNSLOTH,
    VF_FW_TORCHTUNE,
    VF_FW_AXOLOTL,
    VF_FW_LLAMA_FACTORY,
    VF_FW_TORCHTITAN,
    VF_FW_DEEPSPEED
};
enum {
    VF_TK_OPTIMIZER = 1u << 0,
    VF_TK_PRECISION = 1u << 1,
    VF_TK_GRAD_CKPT = 1u << 2,
    VF_TK_LIGER = 1u << 3,
    VF_TK_COMPILE = 1u << 4,
    VF_TK_CE = 1u << 5 /* --chunked-ce given (ce_chunks) */
};
const char *vf_framework_name(enum vf_framework f);

struct vf_train_opts {
    enum vf_train_method method;
    enum vf_optimizer optimizer;
    enum vf_precision precision;
    uint32_t batch;      /* micro-batch per GPU; 0 = 1 (sequence length: ctx_tokens) */
    uint32_t grad_accum; /* gradient accumulation steps; 0 = 1 (no memory effect) */
    enum vf_grad_ckpt grad_checkpointing;
    bool no_flash_attn;       /* eager attention: the s^2 scores are saved */
    bool liger;               /* Liger kernels: fused linear cross-entropy, RMSNorm, SwiGLU */
    uint32_t ce_chunks;       /* chunked cross-entropy (torchtune): chunks; 0 = plain */
    bool optimizer_in_bwd;    /* the step runs per parameter in backward (torchtune): each
                               * gradient is freed at once */
    uint32_t lora_rank;       /* 0 = 16 */
    const char *lora_targets; /* NULL = all-linear; else "q,k,v,o,gate,up,down" (any subset) */
    uint32_t freeze_layers;   /* --method freeze: the last N layers are trained; 0 = 2 */
    enum vf_zero zero;        /* sharding over several GPUs */
    enum vf_fsdp fsdp;        /* or the same given as an FSDP strategy */
    enum vf_offload offload;
    enum vf_accounting accounting;
    bool cache_latents, cache_text; /* diffusion fine-tuning: VAE / text encoders leave the GPU */
    /* --- issue 22: framework presets (DESIGN section 8 --framework NAME[@VERSION]) --- */
    enum vf_framework framework;   /* whose defaults fill the knobs not given; 0 = the default */
    const char *framework_version; /* NULL = the newest modelled release */
    bool compile;                  /* torch.compile (with VF_TK_COMPILE in given) */
    bool eager_modules; /* CUDA_MODULE_LOADING=EAGER (or CUDA < 11.7, PyTorch < 1.13): every
                         * kernel loaded into the context at start; default lazy */
    uint32_t given;     /* VF_TK_* bits: the knobs vf_train_set was given */
};

const char *vf_train_method_name(enum vf_train_method m);
const char *vf_optimizer_name(enum vf_optimizer o);
const char *vf_precision_name(enum vf_precision p);
const char *vf_grad_ckpt_name(enum vf_grad_ckpt g);
const char *vf_fsdp_name(enum vf_fsdp f);
const char *vf_offload_name(enum vf_offload o);
const char *vf_accounting_name(enum vf_accounting a);
/*
 * Sets one training knob by name, as the CLI, the web API and config files spell it:
 * "method", "optimizer", "precision", "grad-checkpointing", "flash-attn", "fsdp", "offload",
 * "accounting", "zero" (0..3), "liger" and "optimizer-in-bwd" (on/off), "lora-targets" (kept as
 * given, checked against the model by the estimate). Accepts the engines' own spellings of the
 * values (adamw_bnb_8bit, paged_adamw_8bit, FULL_SHARD, ...). VF_EINVAL names the knob and lists
 * the accepted values; the value string must outlive t for "lora-targets".
 */
enum vf_err vf_train_set(struct vf_train_opts *t, const char *key, const char *value,
                         struct vf_error *err);
/* issue 22: also "framework" (NAME[@VERSION]: hf, trl, unsloth, torchtune, axolotl,
 * llama-factory, torchtitan, deepspeed; the version string must outlive t) and "compile"
 * (on/off); each knob given sets its VF_TK_* bit in t->given. */

/* Image and video generation (--task image|video). 0 = the pipeline's default. */
enum vf_te_place {
    VF_TE_DEFAULT = 0,  /* the engine's: ComfyUI loads per phase, diffusers keeps all */
    VF_TE_GPU,          /* resident on the GPU through every phase */
    VF_TE_CPU,          /* encoded on the CPU (ComfyUI's CLIP loader device cpu) */
    VF_TE_OFFLOAD_AFTER /* on the GPU to encode, then moved out */
};
enum vf_dif_offload {
    VF_DOFF_NONE = 0,
    VF_DOFF_LOWVRAM,    /* ComfyUI --lowvram: weights streamed by layer */
    VF_DOFF_NOVRAM,     /* ComfyUI --novram: nothing kept on the GPU */
    VF_DOFF_BLOCK_SWAP, /* block swap: block_swap denoiser blocks in host RAM */
    VF_DOFF_MODEL_CPU,  /* diffusers enable_model_cpu_offload: one model at a time */
    VF_DOFF_SEQUENTIAL  /* diffusers enable_sequential_cpu_offload / group offload */
};
enum vf_cfg { VF_CFG_DEFAULT = 0, VF_CFG_ON, VF_CFG_OFF };
struct vf_diffusion_opts {
    uint32_t width, height; /* pixels */
    uint32_t frames;        /* video frames (1 for images) */
    uint32_t batch;         /* images/videos generated at once */
    bool tiled_vae;         /* VAE Decode (Tiled) / vae.enable_tiling() */
    bool sliced_vae;        /* diffusers vae.enable_slicing(): one sample at a time */
    bool tiny_vae;          /* diffusers AutoencoderTiny (TAESD) in place of the VAE */
    uint32_t vae_tile;      /* tile size in pixels; 0 = 512 */
    enum vf_te_place text_encoder;
    struct vf_quant te_weights; /* kind VF_QK_NATIVE = the pipeline's default files */
    enum vf_dif_offload offload;
    uint32_t block_swap; /* blocks moved to host RAM (VF_DOFF_BLOCK_SWAP) */
    uint32_t loras;      /* LoRA files applied to the denoiser (rank lora_rank, 0 = 16) */
    uint32_t lora_rank;
    enum vf_cfg cfg;         /* classifier-free guidance (cond + uncond) */
    enum vf_dtype vae_dtype; /* VF_DT_DEFAULT = the pipeline's; fp32 as diffusers' Wan examples */
    uint32_t steps;          /* issue 24, speed only: denoising steps; 0 = the pipeline's */
    uint32_t sp;             /* issue 24, speed only: xDiT's Ulysses degree; 0 = 1 */
    bool eager_attn;         /* diffusers' AttnProcessor (no SDPA): tokens^2 scores (F-DIF-18) */
};
const char *vf_dif_offload_name(enum vf_dif_offload o);
/*
 * Sets one image/video knob by name as the CLI and the web API spell it: "offload" (none,
 * lowvram, novram, block-swap, model-cpu, sequential, group), "text-encoder" (gpu, cpu,
 * offload-after-encode), "vae-decode" (full, tiled, sliced, tiny: one mode), "cfg" (on, off),
 * "attention" (sdpa, eager).
 * VF_EINVAL lists the accepted values.
 */
enum vf_err vf_diffusion_set(struct vf_diffusion_opts *d, const char *key, const char *value,
                             struct vf_error *err);

/*
 * Engine options in the engine's own spelling ("--gpu-memory-utilization" "0.85", "-ngl" "20",
 * "num_ctx" "8192", "OLLAMA_KV_CACHE_TYPE" "q8_0"), passed through to the engine, which parses
 * and validates them (VF_EINVAL naming the option and the accepted forms). Keys are the
 * primary names of the engine's struct vf_engine_flag table.
 */
#define VF_MAX_ENGINE_OPTS 32
struct vf_engine_opts {
    const char *key[VF_MAX_ENGINE_OPTS];
    const char *value[VF_MAX_ENGINE_OPTS]; /* NULL for a flag without a value */
    size_t n;
};
/* The value of option `key` (NULL when absent; "" for a flag given without a value). */
const char *vf_engine_opt(const struct vf_engine_opts *o, const char *key);

/* How pick ranks: in one currency (NULL = EUR); offers in a currency with an explicit
 * exchange rate (1 unit of `from` = micro/10^6 units of `currency`) are converted and ranked
 * with it, every other currency is listed apart. */
#define VF_MAX_FX 8
struct vf_pick_opts {
    const char *currency;
    struct {
        char from[4];
        uint64_t micro;
    } fx[VF_MAX_FX];
    size_t n_fx;
    bool rank_cost; /* --rank cost: by price per 1M output tokens (F-SPD-06) */
};

/* Devices a --gpu A,B mix names at most (issue 21). */
#define VF_MAX_MIX 16

struct vf_workload {
    enum vf_task task;
    const char *engine;      /* NULL: the task's default engine (generic, pytorch, comfyui) */
    uint64_t ctx_tokens;     /* per sequence; 0 = the model's maximum context */
    uint64_t users;          /* concurrent sequences; 0 = 1 */
    struct vf_quant weights; /* kind VF_QK_NATIVE = the checkpoint's own */
    enum vf_dtype kv_dtype;  /* VF_DT_DEFAULT = the engine's default */
    uint32_t gpus;           /* cards the model is split over; 0 = 1 */
    uint64_t usable_bytes;   /* per card; VF_UNKNOWN/0 when no card is given */
    bool no_upgrade;         /* pick: do not look for the 8-bit alternative */
    bool force;              /* allow a context beyond the model's maximum (rope scaling) */
    struct vf_train_opts train;
    struct vf_diffusion_opts diffusion;
    struct vf_engine_opts opts; /* the engine's own flags */
    /* What the request named besides the workload (vf_workload_set; strings are borrowed
     * from the caller and must outlive w). */
    const char *model;        /* MODEL: a catalog id, a path or a hub id */
    const char *gpu;          /* --gpu CARD[:N]|SIZE|local, NULL when not given */
    uint32_t gpus_asked;      /* --gpus N, 0 = not given */
    double hours;             /* pick: the job's length in hours, 0 = not given */
    double host_gbps;         /* issue 24: host memory bandwidth for offload speed, 0 = default */
    struct vf_pick_opts pick; /* pick: --currency, --fx */
    const char *tool;         /* explain: --tool, NULL = detected from the log */
    bool task_set;            /* --task given; else the model's own task */
    const char *ctx_flag;     /* the spelling that set the context, for the assumptions */
    uint64_t llamacpp_total_ctx; /* llama.cpp's -c: ctx x slots */
    uint64_t np;                 /* llama.cpp's -np, 0 = not given */
    const char *ctv;             /* -ctv as given, checked against -ctk */
    /* issue 21: llama.cpp's -ctv, a V cache type apart from K (kv_dtype); VF_DT_DEFAULT = the
     * same as kv_dtype. Only llama.cpp accepts a V type that differs. */
    enum vf_dtype kv_dtype_v;
    const char *engine_by; /* the engine's own flag that selected the engine, or NULL */
    /* Issue 28: how MODEL was read when it was not a plain catalog id (an Ollama tag and the
     * quantization it implied), for the assumptions; set by the answer, NULL otherwise. */
    const char *model_note;
    unsigned cmd; /* the VF_CMD_* the options are for (vf_workload_init) */
    /* Engine versions (issue 20): --engine NAME@VERSION or --engine-version VERSION, borrowed;
     * NULL = the engine's newest modelled release (struct vf_engine.version). */
    const char *engine_version;
    /* Issue 20: with a GPU snapshot (--gpu local), CUDA's total of the card whose free memory
     * is usable_bytes (engines that budget a fraction of the total, as vLLM, check the free
     * memory against it); 0 = usable_bytes is the whole card. */
    uint64_t card_total_bytes;
    uint64_t in_tokens;  /* speed and cost: prompt tokens per request, 0 = 4096 */
    uint64_t out_tokens; /* speed and cost: answer tokens per request, 0 = 512 */
    /* Issue 21: --gpu A,B (a mix of cards, DESIGN section 8): each device's usable bytes in the
     * order given (CUDA0 first); n_mix 0 = every card has usable_bytes. With a mix,
     * usable_bytes is the smallest card's (what an even split is bound by). */
    uint32_t n_mix;
    uint64_t mix_usable[VF_MAX_MIX];
};

#define VF_MAX_COMPONENTS  64
#define VF_MAX_ASSUMPTIONS 24
#define VF_MAX_EXTRAS      24
#define VF_MAX_LINES       12

/* A device index of a component: a GPU (0..), every GPU alike, or the host. */
#define VF_DEV_ALL_GPUS (-1)
#define VF_DEV_HOST     (-2)

struct vf_component {
    const char *name; /* "weights", "kv_cache", ... (DESIGN section 8 names) */
    uint64_t bytes;   /* on one GPU when device is VF_DEV_ALL_GPUS, else on that device */
    int device;
    const char *phase; /* NULL, or "load", "prefill", ... */
    const char *note;  /* how it was obtained, for the text renderer */
};

struct vf_estimate {
    struct vf_model model;
    const char *engine;
    enum vf_task task;
    struct vf_quant weights;
    enum vf_dtype kv_dtype;
    uint64_t ctx_tokens, users;
    uint32_t gpus;
    uint64_t weights_bytes;      /* the whole model at the chosen storage */
    uint64_t kv_bytes_per_token; /* per sequence, all layers, at kv_dtype */
    /* issue 21: the V cache type when it differs from kv_dtype (then kv_dtype is K's and JSON
     * prints kv_dtype_k and kv_dtype_v); VF_DT_DEFAULT when K and V are alike. */
    enum vf_dtype kv_dtype_v;
    struct vf_component components[VF_MAX_COMPONENTS];
    size_t n_components;
    uint64_t total_bytes; /* peak on the most loaded GPU */
    uint64_t host_bytes;
    const char *assumptions[VF_MAX_ASSUMPTIONS];
    size_t n_assumptions;
    /* task extras (JSON "train" / "diffusion" objects) */
    uint64_t trainable_params; /* train */
    struct vf_train_opts train;
    uint64_t diffusion_tokens; /* image/video: tokens the transformer attends over */
    const char *peak_phase;    /* image/video: "denoise", "vae_decode", ... */
    struct vf_diffusion_opts diffusion;
    /* Engine results (JSON: an object named extra_name, e.g. "vllm", "llamacpp"). */
    const char *extra_name;
    struct vf_extra {
        const char *key; /* "kv_cache_tokens" */
        int kind;        /* VF_EXTRA_U64, VF_EXTRA_REAL, VF_EXTRA_TEXT, VF_EXTRA_BOOL */
        uint64_t u64;    /* VF_UNKNOWN prints null */
        double real;
        const char *text;
    } extras[VF_MAX_EXTRAS];
    size_t n_extras;
    /* What the engine itself would print, and the flags that would make it fit, as lines. */
    const char *lines[VF_MAX_LINES];
    size_t n_lines;
    const char *fixes[VF_MAX_LINES];
    size_t n_fixes;
    /* What could not be added to the tables above (a VF_MAX_* table full, or no memory), or
     * NULL: vf_estimate() then fails (VF_ELIMIT naming the limit, or VF_ENOMEM) rather than
     * return a result with something silently left out. */
    const char *incomplete;
    /* Set for the fit solver's probes, which read only the totals: assumptions, engine lines
     * and fixes are not formatted (they stay empty). */
    bool totals_only;
    /* Engine versions (issue 20): the release whose rules were used (JSON "engine_version"),
     * NULL for an engine without versions. */
    const char *engine_version;
    /* Issue 21: where the engine itself keeps part of the model on the CPU to run on the card
     * given (Ollama's planner, llama.cpp --fit / -ngl auto): runs is set, with the layers on
     * the GPUs and the CPU (the output layer counts as one), the bytes in host memory and the
     * weight bytes on the GPUs and on the host. */
    struct {
        bool runs;
        uint32_t gpu_layers, cpu_layers;
        uint64_t host_bytes, gpu_weight_bytes, host_weight_bytes;
    } spill;
    /* Issue 21, --gpu A,B: what each device needs for every layer to be on the GPUs, where the
     * engine places layers unevenly and runs with spill (Ollama's layout): the fit reads these;
     * n_dev_need 0 = each device's components are its need. */
    uint32_t n_dev_need;
    uint64_t dev_need[VF_MAX_MIX];
};
enum { VF_EXTRA_U64 = 0, VF_EXTRA_REAL, VF_EXTRA_TEXT, VF_EXTRA_BOOL };

/* A flag an engine takes, in its own spelling. */
struct vf_engine_flag {
    const char *name;  /* "--max-model-len", "-ngl", "num_ctx", "OLLAMA_KV_CACHE_TYPE" */
    const char *alias; /* another spelling or NULL ("--n-gpu-layers") */
    bool takes_value;
    const char *help; /* one line, with the accepted forms */
};

/* Engine versions (issue 20): one rule of an engine that changed at a release. An engine's
 * table lists them oldest first; a version uses every rule whose `since` is not newer. */
struct vf_engine_rule {
    const char *since;  /* the first release with the rule, "0.8.0" */
    const char *regime; /* the rule set it belongs to, "V1", shown by 'vramfit help engines' */
    const char *rule;   /* what changed, one line */
    const char *source; /* the changelog entry, pull request or source file that says so */
};

/* One engine: every estimator sits behind this table (issue 4 adds more rows). */
struct vf_engine {
    const char *name;    /* "generic" */
    const char *version; /* the engine version it models, "" for generic */
    unsigned tasks;      /* bit (1u << enum vf_task) for each task it estimates */
    /* Can the model be split over n cards by this engine? If not, *why is set. */
    bool (*can_split)(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                      const char **why);
    enum vf_err (*estimate)(struct vf_arena *a, const struct vf_model *m,
                            const struct vf_workload *w, struct vf_estimate *out,
                            struct vf_error *err);
    const struct vf_engine_flag *flags; /* its own flags (NULL-name terminated), or NULL */
    /* Engine versions (issue 20): the rules that changed by release (NULL-since terminated,
     * oldest first), or NULL for an engine modelled at one release only. */
    const struct vf_engine_rule *rules;
    /* Its estimate reads nothing of the card (neither w->usable_bytes nor the card's name):
     * pick estimates it once per card count and sets each card's fit against that total. */
    bool card_blind;
};
/* The engine by name (case-insensitive, "llama.cpp" = "llamacpp"); NULL when unknown. */
const struct vf_engine *vf_engine_find(const char *name);
/* The workload's engine: w->engine, or the task's default; NULL (and err) when the named
 * engine is unknown or does not estimate that task. */
const struct vf_engine *vf_engine_for(const struct vf_workload *w, struct vf_error *err);
/* All engines, for help texts. */
const struct vf_engine *const *vf_engines(size_t *n);
/* Engine versions (issue 20): compares release strings by their numbers ("0.6" < "0.6.4" <
 * "0.11.0"; a leading letter such as llama.cpp's "b" is skipped): <0, 0, >0. */
int vf_engine_version_cmp(const char *a, const char *b);
/* Engine versions (issue 20): checks `version` against e's rules: VF_OK when e models it (any
 * release from its oldest rule on; newer than the newest uses the newest rules), else
 * VF_EINVAL naming the releases modelled. An engine without rules accepts only its own. */
enum vf_err vf_engine_version_check(const struct vf_engine *e, const char *version,
                                    struct vf_error *err);

/* ------------------------------------------------------------------ options */

/*
 * Every option of estimate, pick and explain in one table (src/lib/options.c): the CLI, the
 * HTTP API (query and JSON body) and the help texts all come from it. An engine's own flags
 * (-ngl, --gpu-memory-utilization, num_ctx, OLLAMA_KV_CACHE_TYPE...) are its struct
 * vf_engine_flag table; vf_workload_set looks there after ours (DESIGN section 8).
 */
#define VF_CMD_ESTIMATE 1u
#define VF_CMD_PICK     2u
#define VF_CMD_EXPLAIN  4u
enum vf_opt_kind {
    VF_KIND_FLAG,   /* on/off: alone, or 1/0 true/false on/off yes/no */
    VF_KIND_COUNT,  /* a whole number in [min, max] */
    VF_KIND_TOKENS, /* a token count: 32768, 32k, 128K */
    VF_KIND_REAL,   /* a decimal number */
    VF_KIND_ENUM,   /* one of the words in `values` */
    VF_KIND_TEXT,   /* free text (a card, a model, a precision...) checked by its setter */
    VF_KIND_LIST    /* repeatable: each use adds one */
};
struct vf_option {
    int id;                     /* internal: which setter */
    const char *name;           /* the primary spelling, as on the command line: "--ctx" */
    const char *const *aliases; /* other spellings (the engines'), NULL-terminated, or NULL */
    enum vf_opt_kind kind;
    const char *arg;   /* the value's name in help ("N", "PREC"); NULL for a flag */
    const char *bare;  /* the value when given alone (an optional value), or NULL */
    uint64_t min, max; /* VF_KIND_COUNT */
    unsigned cmds;     /* the VF_CMD_* taking it */
    unsigned tasks;    /* bits (1u << enum vf_task); 0 = every task */
    bool two_words;    /* the value may be two words ("block-swap 20") */
    const char *group; /* help section: NULL (general), "training", "image/video" */
    const char *help;  /* one line */
};
/* The table, in help order. */
const struct vf_option *vf_options(size_t *n);
/*
 * The option spelled `name` for command cmd (VF_CMD_*): our table first, then the engines'
 * own flags (*engine_flag and *engine set). A name with leading dashes must match a spelling
 * exactly ("--ctx", "-ngl"); one without (an HTTP query key) matches ignoring the dashes, with
 * '_' and '-' alike ("ctx", "max_model_len", "ngl"). NULL when unknown.
 */
const struct vf_option *vf_option_find(const char *name, unsigned cmd,
                                       const struct vf_engine_flag **engine_flag,
                                       const struct vf_engine **engine);
/* The option `name` means for w: vf_option_find's, except that a spelling of ours that is
 * also the named engine's own flag is the engine's where ours does not apply to its tasks
 * (--flash-attn, --batch-size with --engine llama.cpp). */
const struct vf_option *vf_workload_option(const struct vf_workload *w, const char *name,
                                           const struct vf_engine_flag **engine_flag,
                                           const struct vf_engine **engine);
/* Starts a workload for command cmd (VF_CMD_*): everything at its default. */
void vf_workload_init(struct vf_workload *w, unsigned cmd);
/*
 * Sets option `name` (any spelling vf_option_find takes) to `value` (NULL or "" = given
 * alone). Engine flags: without --engine the flag selects its engine; with another engine it
 * is VF_EUSAGE naming the engine it belongs to; set --engine first. VF_EUSAGE with a message
 * that starts with the spelling given for a bad value, an unknown name (with the nearest
 * spellings) or an option the command does not take. Strings are borrowed.
 */
enum vf_err vf_workload_set(struct vf_workload *w, const char *name, const char *value,
                            struct vf_error *err);
/* Would `value` be accepted for option o? (The CLI's test for an optional value.) */
bool vf_option_accepts(const struct vf_workload *w, const struct vf_option *o, const char *value);
/* After the last vf_workload_set: the checks between options (-c and --ctx, -np and --users,
 * -ctk and -ctv) and the values they imply. VF_EUSAGE on a conflict. */
enum vf_err vf_workload_finish(struct vf_workload *w, struct vf_error *err);
/* Levenshtein distance of a and b, case-insensitive, over their first 96 bytes (the CLI's
 * "did you mean" for a mistyped command). */
unsigned vf_edit_distance(const char *a, const char *b);
/* Up to max spellings nearest to an unknown `name` (edit distance), for "did you mean". */
size_t vf_option_suggest(const char *name, unsigned cmd, const char **out, size_t max);
/* The help lines of the options of cmd, generated from the table, in arena a. */
char *vf_options_help(struct vf_arena *a, unsigned cmd);

/* Runs the workload's engine. Assumption strings live in arena a. VF_ELIMIT when the result
 * would not fit its tables (out->incomplete names the limit): nothing is left out silently. */
enum vf_err vf_estimate(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        struct vf_estimate *out, struct vf_error *err);

/* ---------------------------------------------------------------- fit, pick */

/* ------------------------------------------------------------------ speed (issue 23) */

/* What the throughput model reads of a workload on one kind of card (F-SPD-01..05). */
struct vf_speed_in {
    uint64_t params, params_active; /* F-PAR-01, F-PAR-02 */
    uint32_t n_experts, n_experts_used;
    uint32_t n_layers, n_heads, head_dim, hidden;
    uint64_t weights_bytes;      /* every card together, at their storage */
    uint64_t kv_bytes_per_token; /* one sequence, every layer */
    const char *weights;         /* the storage's name: "Q4_K_M", "fp8", "nvfp4", "bf16" */
    bool gguf;                   /* llama.cpp-class kernels (llama.cpp, Ollama) */
    uint32_t gpus;               /* cards split over (tensor parallel); 0 = 1 */
    uint64_t users;              /* concurrent sequences; 0 = 1 */
    uint64_t max_users;          /* sequences that fit (F-FIT-01); 0 = no limit known */
    uint64_t in_tokens, out_tokens;
};
/* Tokens per second; lo..hi is the range the bench's errors give (docs/FORMULAS.md F-SPD-05). */
struct vf_speed {
    bool known;         /* false: the card has no bandwidth or no compute figure */
    const char *why;    /* when not known */
    const char *prec;   /* the tensor precision the compute bound uses: "int8", "fp8" ... */
    double decode_tps;  /* one sequence's tokens/s while `batch` decode together (F-SPD-01) */
    double prefill_tps; /* one prompt of in_tokens (F-SPD-02) */
    double serving_tps; /* output tokens/s of every sequence together (F-SPD-03) */
    double decode_lo, decode_hi, prefill_lo, prefill_hi, serving_lo, serving_hi;
    uint64_t batch;             /* sequences decoding together: min(users, max_users) */
    double eta_bw, eta_compute; /* the efficiencies used (F-SPD-04) */
    bool compute_bound;         /* the decode step is compute bound at `batch` */
    double bw_gbps;             /* the achievable bandwidth the model used, GB/s, all cards */
    double decode_fixed_s;      /* of 1 / decode_tps: the seconds that no card figure sets */
    double power_share;         /* of the tensor rate, the boost clock held at the power limit */
    uint32_t gpus;              /* cards the serving figure is for */
};
void vf_speed_llm(const struct vf_gpu_spec *g, const struct vf_speed_in *in, struct vf_speed *out);

/* issue 24 (F-SPD-10..17): how long one image, one clip or a million training tokens takes
 * on a card, what offload adds, and what it costs. */
struct vf_job_speed {
    bool known;
    const char *why;     /* when not known */
    const char *result;  /* "image", "clip", "1M tokens" */
    const char *prec;    /* the tensor precision of the compute bound */
    double seconds;      /* per result */
    double compute_s;    /* of which tensor work at efficiency eta (scales with 1/eta) */
    double offload_s;    /* of which weights, states or layers over PCIe or host memory */
    double comm_s;       /* of which communication between the cards */
    double attn_s;       /* of which attention kernels at their own rate (F-SPD-14) */
    double elem_s;       /* of which memory-bound elementwise kernels (F-SPD-18) */
    double encdec_s;     /* of compute_s, the text encoders and the VAE (outside the steps) */
    double launch_s;     /* the host's kernel-launch time of the steps; when it exceeds their
                          * GPU time the steps take it instead (F-SPD-18), 0 = not modelled */
    double tokens_per_s; /* training: tokens/s per GPU; LLM offload: decode tokens/s */
    double eta;          /* the compute efficiency used (F-SPD-14) */
    double slowdown;     /* seconds / the same with nothing offloaded (1 = none) */
    double lo, hi;       /* the range of seconds (F-SPD-14) */
    double eur_per_hour; /* the cheapest EUR offer of the cards used, 0 = none */
    double eur;          /* per result: eur_per_hour x seconds / 3600, 0 = no price */
};
/* F-SPD-16: fix this card with offload, or take the cheapest bigger one. */
struct vf_speed_choice {
    const char *flags;               /* the offload that makes it fit this card, NULL none */
    struct vf_job_speed with;        /* this card with it */
    const struct vf_gpu_spec *other; /* the cheapest catalog card with an EUR offer that fits */
    struct vf_job_speed there;       /* the workload on it */
    double test_eur;                 /* a quick test there: 15 minutes of its price */
};

struct vf_fit {
    const char *gpu; /* card id or the raw size as given */
    uint32_t count;
    uint64_t usable_bytes; /* per card */
    bool fits;
    int64_t headroom_bytes;  /* usable - total; negative = short by */
    uint64_t max_ctx_tokens; /* largest ctx that fits at the asked users (0 none, VF_UNKNOWN n/a) */
    uint64_t max_users;      /* largest users at the asked ctx (0 none, VF_UNKNOWN n/a) */
    uint64_t max_batch;      /* train, image, video: largest batch (0 none, VF_UNKNOWN n/a) */
    uint32_t max_width, max_height; /* image, video: the largest size at the asked aspect
                                     * (0 none fits) */
    uint32_t max_frames;            /* video: the most frames at the asked size (0: n/a) */
    const char *why_not;            /* when the engine cannot split over count cards */
    struct vf_speed speed;          /* LLM inference on a catalog card (F-SPD); known or not */
    /* Issue 28: --gpu local and short: the process whose memory, freed, covers the shortfall
     * (the smallest such); stop_pid 0 when none does alone. */
    uint32_t stop_pid;
    const char *stop_name; /* "Jupyter kernel a.ipynb, python" */
    uint64_t stop_bytes;
    /* Runs with spill (DESIGN section 8, issue 21): the engine moves layers to the CPU and
     * runs; fits is then true and on is set. slowdown: decode time over all-GPU decode time,
     * 0 when not known (a card without a bandwidth figure). */
    struct {
        bool on;
        uint32_t gpu_layers, cpu_layers;
        uint64_t host_bytes;
        double slowdown;
    } spill;
    /* issue 24 (estimate only, NULL elsewhere): image, video, training or LLM offload speed,
     * and when it does not fit, offload here or a bigger card */
    const struct vf_job_speed *job;
    const struct vf_speed_choice *choice;
    /* Issue 21, --gpu A,B: each device of the mix, in the order given: its card, usable bytes,
     * need and headroom (signed); fits and headroom_bytes above are the tightest device's, and
     * usable_bytes the smallest card's. n_devs 0 = not a mix. */
    uint32_t n_devs;
    struct vf_fit_dev {
        const char *gpu;
        uint64_t usable_bytes, bytes;
        int64_t headroom_bytes;
    } * devs; /* n_devs of them, in the fit's arena */
};

/*
 * Does the workload fit `count` cards of usable_bytes each? Also solves what the task has
 * (F-FIT-01; estimators are monotone in each): inference the largest context and number of
 * users, training the largest sequence and micro-batch, image/video the largest batch.
 */
enum vf_err vf_fit(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                   const char *gpu, uint64_t usable_bytes, uint32_t count, struct vf_fit *out,
                   struct vf_error *err);
/* The largest value v in [lo, hi] with pred(v) true, for a monotone pred (true then false).
 * Returns lo-1 (0 when lo is 0 and pred(0) is false) when none. */
uint64_t vf_bisect(uint64_t lo, uint64_t hi, bool (*pred)(uint64_t v, void *ud), void *ud);

/* What a pick row keeps of the estimate on its cards (issue 15: a whole struct vf_estimate,
 * 2.6 KB, per offer made pick's memory grow without bound). The components and the
 * estimator's fixes are there for the short cards only (the renderers print them there);
 * they point into an estimate in the pick's arena. Fitting rows have none (NULL, 0). */
struct vf_pick_est {
    uint64_t total_bytes;   /* peak on the most loaded GPU */
    uint64_t weights_bytes; /* the whole model at the chosen storage */
    enum vf_dtype kv_dtype;
    const struct vf_component *components;
    size_t n_components;
    const char *const *fixes;
    size_t n_fixes;
    uint64_t kv_bytes_per_token; /* one sequence (speed, F-SPD-01) */
};

struct vf_pick_row {
    const struct vf_gpu_spec *gpu;
    const struct vf_offer *offer; /* NULL for a card with no price */
    uint32_t count;
    struct vf_fit fit;
    struct vf_pick_est est;     /* the estimate on this many cards */
    const char *precision_note; /* "fp8 not native: falls back to ..." or NULL */
    /* Short cards: does an 8-bit KV cache (q8_0 for GGUF, fp8 otherwise) make it fit? */
    enum vf_dtype kv_fix; /* VF_DT_DEFAULT when not tried (the KV cache is already small) */
    bool kv_fix_fits;
    /* An offer converted with --fx: `offer` is the converted copy, this the catalog's. */
    const struct vf_offer *original;
    uint64_t fx_micro;
    double cost_per_mtok; /* price per 1M output tokens (F-SPD-06); 0 = not known */
    /* Image/video under --rank cost (issue 24, DESIGN section 8): the job's time and euros per
     * result on this card (F-SPD-10..16): as it is where it fits; on a short card with the
     * offload that makes it run there (offload_flags; NULL when none does). NULL when not
     * computed: held apart so that a pick of 100k LLM offers keeps its rows small (issue 15) */
    const char *offload_flags;
    const struct vf_job_speed *job;
};

struct vf_pick {
    struct vf_pick_row *rows; /* fitting offers in `currency`, cheapest first */
    size_t n_rows;
    struct vf_pick_row *other; /* fitting offers in other currencies, by currency, price */
    size_t n_other;
    struct vf_pick_row *unpriced; /* fitting cards with no offer, smallest first */
    size_t n_unpriced;
    struct vf_pick_row *short_rows; /* single cards that do not fit, biggest first */
    size_t n_short;
    char currency[4];
    /* Cards left out because they cannot run the weights' precision natively. */
    size_t n_skipped;
    const char *skipped_why; /* "no native FP8 on this card" */
    /* Multi-GPU offers the engine cannot use (ComfyUI runs a model on one card). */
    size_t n_unsplittable;
    const char *unsplittable_why;
    /* Our guide: move up a size when the fix costs quality. When the weights are 4-bit or
     * less, the cheapest offer in `currency` that holds the same workload at 8 bits. */
    bool low_bits;
    struct vf_quant upgrade_quant;
    struct vf_pick_row *upgrade; /* NULL when nothing holds it at 8 bits */
    bool rank_cost;              /* rows ranked by cost_per_mtok (--rank cost) */
    const char *cost_unit;       /* "image"/"clip": rows ranked by job.eur instead (issue 24) */
};

/* Bits per weight of a scheme's main type, rounded down (16 for bf16, 4 for Q4_K_M/awq). */
unsigned vf_quant_bits(const struct vf_quant *q);

/* Every offer of the catalog that fits, ranked (F-PICK-01); w->gpus, when set, keeps only
 * the offers of that many cards. opts may be NULL (EUR, no conversion). */
enum vf_err vf_pick(struct vf_arena *a, const struct vf_catalog *c, const struct vf_model *m,
                    const struct vf_workload *w, const struct vf_pick_opts *opts,
                    struct vf_pick *out, struct vf_error *err);

/* ------------------------------------------------------------ model files */

/*
 * A byte source the readers pull headers from: a file (pread), a memory buffer, or (issue 3)
 * HTTP range requests. read() fills buf with up to n bytes at offset off and sets *got; a
 * short read means end of data. size is the total length, or VF_UNKNOWN.
 */
struct vf_reader {
    enum vf_err (*read)(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                        struct vf_error *err);
    void *ud;
    uint64_t size;
    const char *name; /* for messages: the path or URL */
    int fd;           /* vf_reader_open_file's descriptor, -1 otherwise */
    void *mem[2];     /* vf_reader_mem's state */
};
/* A reader over a file; close with vf_reader_close(). */
enum vf_err vf_reader_open_file(struct vf_reader *r, const char *path, struct vf_error *err);
/* A reader over memory (not copied; must outlive the reader). */
void vf_reader_mem(struct vf_reader *r, const void *data, size_t len, const char *name);
void vf_reader_close(struct vf_reader *r);

/* One tensor of a GGUF or safetensors header. */
struct vf_tensor_info {
    const char *name;
    uint32_t n_dims;
    uint64_t dims[8];     /* GGUF: ne[0] first (the row length); safetensors: shape order */
    int ggml_type;        /* GGUF type id; -1 for safetensors */
    const char *st_dtype; /* safetensors dtype ("BF16", "I32", ...); NULL for GGUF */
    uint64_t n_elems;     /* logical parameters (packed 4-bit in I32 counts 8 per element) */
    uint64_t bytes;       /* as stored */
    uint64_t offset;      /* in the data section (GGUF) or the file (safetensors) */
    int32_t layer;        /* blk.N / layers.N, -1 outside layers */
    enum vf_tclass cls;
};

struct vf_gguf_kv; /* one metadata pair (src/lib/read/read_gguf.h) */

struct vf_gguf {
    uint32_t version;
    uint64_t n_kv, n_tensors;
    uint64_t alignment;
    uint64_t header_bytes;          /* up to the aligned start of the tensor data */
    const char *arch;               /* general.architecture */
    const char *name;               /* general.name or NULL */
    int file_type;                  /* general.file_type (llama.cpp ftype), -1 if absent */
    uint32_t split_no, split_count; /* split.no / split.count (0/1 when not split) */
    struct vf_tensor_info *tensors;
    const struct vf_gguf_kv *kv;
    uint64_t weight_bytes; /* sum of the tensors' bytes */
};

/* Reads a GGUF header (metadata and tensor infos, never the weights) from r. Large arrays
 * (tokenizer vocabularies) are skipped while streaming. Errors name the byte offset. */
enum vf_err vf_gguf_read(struct vf_arena *a, struct vf_reader *r, struct vf_gguf *out,
                         struct vf_error *err);
/* Metadata lookups on a read header: an integer or bool (for a per-layer array, element
 * `layer` when `layer` >= 0; false when `layer` < 0), a string. False when the key is absent
 * or of another type. */
bool vf_gguf_get_u64(const struct vf_gguf *g, const char *key, int layer, uint64_t *out);
bool vf_gguf_get_str(const struct vf_gguf *g, const char *key, const char **out);
/* Length of an array value (tokenizer.ggml.tokens -> the vocabulary size). */
bool vf_gguf_get_array_len(const struct vf_gguf *g, const char *key, uint64_t *out);
/* The architecture fields of a GGUF header as a struct vf_model (provenance EXACT; groups
 * and weight bytes from the tensors, per layer). */
enum vf_err vf_model_from_gguf(struct vf_arena *a, const struct vf_gguf *g, const char *origin,
                               struct vf_model *out, struct vf_error *err);

struct vf_safetensors {
    uint64_t header_len; /* the JSON header's length (after the 8-byte prefix) */
    size_t n_tensors;
    struct vf_tensor_info *tensors;
    uint64_t weight_bytes;
    uint64_t params;             /* logical parameters, packed 4-bit storage counted per element */
    const char *metadata_format; /* __metadata__.format or NULL */
};

/* Reads a safetensors header (8-byte length + JSON, bounded by the format's 100 MiB cap). */
enum vf_err vf_safetensors_read(struct vf_arena *a, struct vf_reader *r, struct vf_safetensors *out,
                                struct vf_error *err);

/* ---------------------------------------------------------------- explain */

struct vf_render_opts;

/*
 * One out-of-memory event found in a log (DESIGN section 8, "Explain JSON"). Strings are
 * arena-owned; unknown numbers are VF_UNKNOWN.
 */
#define VF_OOM_MAX_PROCS 16
struct vf_oom_proc {
    uint32_t pid;
    uint64_t bytes;
};
struct vf_oom_event {
    const char *pattern; /* the pattern table row that matched ("pytorch-2.2") */
    const char *tool;    /* what the user ran: comfyui, vllm, ollama, llamacpp, transformers,
                            deepspeed, accelerate, tensorflow, jax, pytorch */
    const char *source;  /* the layer that printed it: pytorch, cublas, cudnn, nccl, triton,
                            ggml-cuda, xla, bitsandbytes, cuda, linux, ... */
    const char *backend; /* cuda, rocm, mps, xpu, cpu */
    int device;          /* GPU index, -1 when not said */
    uint64_t requested_bytes, total_bytes, free_bytes, allocated_bytes, reserved_bytes,
        reserved_unallocated_bytes, non_pytorch_bytes;
    /* PyTorch: a per-process cap ("X allowed"), what CUDA-graph private pools hold, and the
     * device memory used outside this PyTorch (total - free - reserved: other processes and
     * CUDA contexts). VF_UNKNOWN when the message does not say. */
    uint64_t allowed_bytes, private_pool_bytes, outside_pytorch_bytes;
    struct vf_oom_proc procs[VF_OOM_MAX_PROCS];
    size_t n_procs;
    uint64_t line;    /* 1-based line of the log */
    const char *text; /* the message, trimmed to a few hundred bytes */
    uint64_t step;    /* training step seen before it, VF_UNKNOWN if none */
};

/*
 * A symptom that is not an error (DESIGN section 8: explain's symptoms[], exit 3 when no
 * event): a model split between CPU and GPU (`ollama ps`), an nvidia-smi table, a vLLM
 * start-up summary, a run that recovered by itself, allocator warnings that say they are
 * no failure. Unknown numbers are VF_UNKNOWN; `says` is filled by vf_explain().
 */
#define VF_OOM_MAX_SYMPTOMS 8
struct vf_oom_symptom {
    const char *kind; /* ollama_cpu_split, nvidia_smi, vllm_startup, recovered, not_a_failure */
    uint64_t line;
    const char *text;                 /* the line, trimmed */
    const char *name;                 /* ollama: the model; nvidia-smi: the GPU */
    uint64_t used_bytes, total_bytes; /* nvidia-smi: one GPU; ollama: the model's size */
    int cpu_percent, gpu_percent;     /* ollama's PROCESSOR column, -1 if not said */
    int gpu;                          /* nvidia-smi: the GPU index, -1 if not said */
    int processes;                    /* nvidia-smi: rows of its process table, -1 unseen */
    uint64_t kv_tokens;               /* vLLM: GPU KV cache size in tokens */
    uint64_t per_request_tokens;      /* vLLM: "Maximum concurrency for N tokens per request" */
    double max_concurrency;           /* vLLM: "... : 3.77x", 0 if not said */
    const char *const *says;          /* sentences: what it means, what to do */
    size_t n_says;
};

/* What the log says around the events: model, engine flags, sizes (VF_UNKNOWN / NULL). */
struct vf_oom_context {
    const char *model; /* a model name or path seen in the log */
    const char *tool_version;
    uint64_t ctx_tokens; /* vLLM max_model_len, llama.cpp n_ctx, Ollama num_ctx */
    uint64_t batch;
    uint32_t width, height, frames;
    double gpu_memory_utilization;  /* vLLM, 0 when not seen */
    uint64_t first_step, last_step; /* training steps seen (leak: OOM after many steps) */
    const char *node_type;          /* ComfyUI's error report: the node that failed ("...Loader") */
    /* issue 19: the job the log shows (train, video, image, infer; NULL: none shown) and the
     * phase or llama.cpp buffer last named (weights, kv, compute, decode; NULL) */
    const char *job, *phase;
    struct vf_oom_symptom *symptoms; /* symptoms seen (the first VF_OOM_MAX_SYMPTOMS) */
    size_t n_symptoms;
};

/* A log read so far: events kept (the last VF_OOM_MAX_EVENTS), and the count of all. */
#define VF_OOM_MAX_EVENTS 64
struct vf_oom_scan;
/* A streaming scanner: feed any amount of bytes, any number of times (lines may span feeds;
 * a line over VF_OOM_MAX_LINE bytes is cut, never held whole). Memory stays bounded. */
#define VF_OOM_MAX_LINE ((size_t)64 << 10)
enum vf_err vf_oom_scan_open(struct vf_arena *a, struct vf_oom_scan **out, struct vf_error *err);
enum vf_err vf_oom_scan_feed(struct vf_oom_scan *s, const char *buf, size_t len,
                             struct vf_error *err);
/* Feeds fd from *offset to its end: a regular file through a window of VF_OOM_MAP_WINDOW
 * bytes mapped at a time (unmapped before the next; the scanner reads the mapped bytes, no
 * copy), anything else (pipe, stdin) through read(). *offset ends past the last byte read, so
 * a caller that tails a growing file calls it again from there. name: for errors. */
#define VF_OOM_MAP_WINDOW ((size_t)4 << 20)
enum vf_err vf_oom_scan_fd(struct vf_oom_scan *s, int fd, uint64_t *offset, const char *name,
                           struct vf_error *err);
/* Ends the input; events[] (oldest first), their total count and the context. */
enum vf_err vf_oom_scan_finish(struct vf_oom_scan *s, const struct vf_oom_event **events,
                               size_t *n_kept, uint64_t *n_total, const struct vf_oom_context **ctx,
                               struct vf_error *err);

/* A fix for the user's tool, with what it saves (estimate before - after) and what it costs. */
struct vf_fix {
    const char *title;    /* "8-bit KV cache" */
    const char *command;  /* the exact line to type: "--kv-cache-dtype fp8" */
    uint64_t saves_bytes; /* VF_UNKNOWN: not computable; then `missing` says why */
    const char *missing;  /* what would be needed to compute the saving, or NULL */
    const char *quality;  /* "none", "minor", "major" */
    double speed_factor;  /* 1.0 = no change, 0.75 = 25 % slower */
    const char *cost;     /* words: "20-30 % slower" */
    /* issue 19: what the fix applies to, space-separated words, NULL = any: the fix groups
     * (struct vf_explain.group), platforms and jobs */
    const char *tag_tools, *tag_platforms, *tag_jobs;
    /* issue 19: the shortfall left after this fix alone (0: it covers it), VF_UNKNOWN when
     * the shortfall or the saving is not known (DESIGN section 8) */
    uint64_t still_short_bytes;
};

#define VF_MAX_FIXES    16
#define VF_MAX_EVIDENCE 16
struct vf_diagnosis {
    const char *cause; /* fragmentation, other_process, workload_too_large, kv_cache, leak,
                          engine_reservation, host_ram, not_vram, unknown */
    const char *secondary[8];
    size_t n_secondary;
    const char *evidence[VF_MAX_EVIDENCE]; /* sentences with the numbers */
    size_t n_evidence;
    /* What could not be added (a table above or vf_explain's fixes full, or no memory), or
     * NULL: vf_explain() then fails (VF_ELIMIT naming the limit, or VF_ENOMEM) rather than
     * return an explanation with something silently left out. */
    const char *incomplete;
};

struct vf_explain_opts {
    const char *tool;                 /* --tool: override the detected tool, or NULL */
    const struct vf_catalog *catalog; /* for the cheapest card that fits (may be NULL) */
    /* What the user says of the workload (--seq, --batch, --method, --gpus, ...), for what
     * the log does not show; what the log shows wins. NULL: nothing said. */
    const struct vf_workload *workload;
    /* issue 19: the card the job ran on (--gpu), when the log does not give its total:
     * usable bytes (0 = not given) and the catalog card (NULL for a raw size) */
    uint64_t gpu_usable_bytes;
    const struct vf_gpu_spec *gpu;
};

struct vf_explain {
    const struct vf_oom_event *events; /* the last events kept, oldest first */
    size_t n_events;
    uint64_t n_total; /* every event found */
    const struct vf_oom_context *ctx;
    struct vf_diagnosis diagnosis;
    struct vf_fix fixes[VF_MAX_FIXES];
    size_t n_fixes;
    const struct vf_gpu_spec *bigger_card; /* the cheapest card that would fit, or NULL */
    const struct vf_offer *bigger_offer;
    /* issue 19: what the fixes were chosen for: the tool (--tool or the event's), its fix
     * group (the tools tag of struct vf_fix), the platform (cuda rocm mps xpu cpu) and the
     * job (image infer train unknown) */
    const char *tool, *group, *platform, *job;
    /* issue 19: the shortfall the fixes are measured against (VF_UNKNOWN: not known), and the
     * combination: the fixes (indices into fixes[]) applied one on top of the other, in
     * order, each kept when it lowers the estimate, until the estimate fits the card */
    uint64_t short_bytes;
    size_t combination[VF_MAX_FIXES];
    size_t n_combination;
    bool combination_fits;
    uint64_t combination_total_bytes; /* the estimate with the combination, VF_UNKNOWN: none */
};

/* Diagnoses the scanned events (the last one) and ranks the fixes for its tool (F-OOM-nn).
 * VF_ELIMIT when the explanation would not fit its tables (diagnosis.incomplete names it). */
enum vf_err vf_explain(struct vf_arena *a, const struct vf_oom_event *events, size_t n_events,
                       uint64_t n_total, const struct vf_oom_context *ctx,
                       const struct vf_explain_opts *opts, struct vf_explain *out,
                       struct vf_error *err);
char *vf_render_explain_text(struct vf_arena *a, const struct vf_explain *x,
                             const struct vf_render_opts *o);
char *vf_render_explain_json(struct vf_arena *a, const struct vf_explain *x);

/* ---------------------------------------------------------------- GPU probe */

struct vf_gpu_proc {
    uint32_t pid;        /* as the driver reports it (the host's, seen from a container) */
    uint64_t used_bytes; /* VF_UNKNOWN when the driver does not say */
    const char *name;    /* NULL when the process is not visible here */
    const char *cmdline;
    const char *kind;      /* "compute", "graphics", "mps", "compute+graphics", NULL */
    const char *container; /* container id from its cgroup (12 hex), NULL on the host */
    const char *pod_uid;   /* Kubernetes: the pod's UID from a kubepods cgroup, else NULL */
    uint32_t local_pid;    /* the PID in our namespace when it differs (matched), else 0 */
    const char *match;     /* how local_pid was found: "only GPU process here", NULL */
    const char *hint;      /* what it likely holds and what frees it (Jupyter, vLLM, ...) */
    uint32_t gpu_instance; /* MIG GPU instance id (NVML), UINT32_MAX none */
    const char *app;       /* the application recognised from the command line: "ComfyUI",
                            * "Jupyter kernel" (+ its notebook when Jupyter names it), "vLLM",
                            * "Ollama", "llama-server", "training script train.py"; NULL */
};

struct vf_gpu_dev {
    uint32_t index;
    const char *name;
    const char *uuid;
    uint64_t total_bytes; /* as nvidia-smi shows it */
    uint64_t used_bytes;
    uint64_t free_bytes;
    uint64_t reserved_bytes; /* driver/firmware reservation (NVML v2); VF_UNKNOWN unknown */
    uint32_t util_percent;   /* UINT32_MAX unknown */
    bool unified;            /* shares the system's RAM: the figures are /proc/meminfo's */
    uint32_t mig_parent;     /* 0: a whole GPU; else 1 + the index of the GPU it is a MIG
                              * instance of (index: the instance's number) */
    struct vf_gpu_proc *procs;
    size_t n_procs;
};

struct vf_gpu_snapshot {
    const char *backend;
    struct vf_gpu_dev *devs;
    size_t n_devs;
};

/*
 * Reads the GPUs and their processes now. The backend is VRAMFIT_GPU_BACKEND when set
 * ("fake" reads VRAMFIT_FAKE_GPUS), else every compiled-in backend in order.
 * VF_ENODEV when none finds a device, with each backend's reason in err.
 */
enum vf_err vf_gpu_snapshot(struct vf_arena *a, struct vf_gpu_snapshot *out, struct vf_error *err);

/* ------------------------------------------------------------ measuring a run */

/* One sample of a run: milliseconds since the start, the device's used memory, the device's
 * use before the start, and what the command's process tree holds (F-RUN-01/02). */
struct vf_run_sample {
    double t_ms;
    uint64_t device_used, baseline, tree_bytes;
};
/* The PIDs of root's process tree (root first) from /proc under VRAMFIT_SYSROOT, at most cap.
 * *cut (may be NULL) is set true when the tree may be incomplete: it had more than cap
 * members, or /proc listed more than VF_RUN_MAX_PROCS processes (those past it unread). */
#define VF_RUN_MAX_PROCS 4096
size_t vf_run_tree(uint32_t root, uint32_t *out, size_t cap, bool *cut);
/* What the tree holds on device (-1: every device) in snapshot s. */
uint64_t vf_run_tree_bytes(const struct vf_gpu_snapshot *s, const uint32_t *tree, size_t n,
                           int device);
/* The index of the peak sample (F-RUN-03). */
size_t vf_run_peak(const struct vf_run_sample *t, size_t n);
/* The samples as CSV; the timeline as an SVG (total: the card, 0 unknown; oom_ms < 0: none). */
char *vf_render_run_csv(struct vf_arena *a, const struct vf_run_sample *t, size_t n);
char *vf_render_run_svg(struct vf_arena *a, const struct vf_run_sample *t, size_t n, uint64_t total,
                        double oom_ms);
/* The summary of one run, as `vramfit run --json` and --report print it. */
struct vf_run_report {
    char *const *argv; /* the command and its arguments, NULL-terminated (any bytes) */
    int exit_status;   /* the child's status (128 + N for signal N) */
    double duration_ms;
    const char *gpu; /* the measured card's name; NULL when nothing was measured */
    uint64_t total_bytes, baseline_bytes, peak_tree_bytes, peak_device_delta_bytes;
    double peak_at_ms;
    int64_t headroom_bytes; /* the card's total less its use at the peak (negative: over) */
    size_t samples;
    double interval_ms;
    double oom_at_ms; /* < 0: no out-of-memory message seen */
    size_t tree_cut;  /* samples whose process tree was cut at a cap (vf_run_tree's *cut) */
};
/* The report as a JSON document (always valid JSON: bytes of argv that are not UTF-8 become
 * U+FFFD); NULL when memory runs out. */
char *vf_render_run_json(struct vf_arena *a, const struct vf_run_report *r);

/* ------------------------------------------------------------------ answers */

/* A card as a request names it (--gpu CARD[:N] | SIZE | local), resolved. */
struct vf_card {
    const char *name;  /* catalog id, the size as given, or "local GPU(s)" */
    const char *label; /* what to print: "RTX 4090 24 GB" */
    uint64_t usable_bytes;
    uint32_t count;
    const char *note;             /* local: what was subtracted */
    uint64_t total_bytes;         /* issue 20: local: CUDA's total of the card, 0 otherwise */
    const struct vf_gpu_dev *dev; /* issue 28: local: the card whose free memory is the
                                   * budget, with its processes; NULL otherwise */
    /* Issue 21: --gpu A,B: every device in the order given (count of them; usable_bytes is
     * then the smallest); n_mix 0 = count cards of one kind. */
    uint32_t n_mix;
    struct vf_card_dev {
        const char *name, *label;
        uint64_t usable_bytes;
    } mix[VF_MAX_MIX];
};
/* Resolves ref with gpus (--gpus, 0 = not given). VF_EINVAL for an unknown or ambiguous card
 * (the candidates listed), VF_EUSAGE for a bad count, vf_gpu_snapshot's errors for local. */
enum vf_err vf_card_resolve(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                            uint32_t gpus, struct vf_card *out, struct vf_error *err);

/* What estimate and pick answer (the same for the CLI and the HTTP API). */
struct vf_answer {
    struct vf_model model;
    struct vf_estimate est;
    bool has_fit; /* a card was named: card and fit are set */
    struct vf_card card;
    struct vf_fit fit;
    struct vf_pick pick; /* pick */
    bool yes;            /* fits (or no card named); pick: some offer fits */
};
/*
 * The estimate of w (vf_workload_set, then vf_workload_finish): resolves w->model, takes its
 * task unless --task was given and the engine its format implies (GGUF: llama.cpp), resolves
 * w->gpu, estimates, adds what the flags' spellings decided to the assumptions, and with a
 * card fits (F-FIT-01). w is updated with what was resolved. Errors of every step.
 */
enum vf_err vf_answer_estimate(struct vf_arena *a, const struct vf_catalog *c,
                               struct vf_workload *w, struct vf_answer *out, struct vf_error *err);
/* Every offer that fits w (vf_pick), with the estimate on one card. */
enum vf_err vf_answer_pick(struct vf_arena *a, const struct vf_catalog *c, struct vf_workload *w,
                           struct vf_answer *out, struct vf_error *err);
/* Scans a log of any size from read (in 1 MiB chunks, bounded memory) and explains its last
 * out-of-memory error for w (w->model, w->tool, the workload flags); out->n_events is 0 when
 * none was found. read fills buf with up to cap bytes and sets *got, 0 at the end. */
enum vf_err vf_answer_explain(struct vf_arena *a, const struct vf_catalog *c, struct vf_workload *w,
                              enum vf_err (*read)(void *ud, char *buf, size_t cap, size_t *got,
                                                  struct vf_error *err),
                              void *ud, struct vf_explain *out, struct vf_error *err);
/* The same for a log read from fd (vf_oom_scan_fd: mapped when it is a file); name: for errors. */
enum vf_err vf_answer_explain_fd(struct vf_arena *a, const struct vf_catalog *c,
                                 struct vf_workload *w, int fd, const char *name,
                                 struct vf_explain *out, struct vf_error *err);
/* The same for a log already fed to scan (vf_oom_scan_open/feed in arena a, as a server does
 * while the body arrives): finishes the scan and explains. */
enum vf_err vf_answer_explain_scanned(struct vf_arena *a, const struct vf_catalog *c,
                                      struct vf_workload *w, struct vf_oom_scan *scan,
                                      struct vf_explain *out, struct vf_error *err);
/* The same over a log in memory. */
enum vf_err vf_answer_explain_text(struct vf_arena *a, const struct vf_catalog *c,
                                   struct vf_workload *w, const char *text, size_t len,
                                   struct vf_explain *out, struct vf_error *err);
/* A view of c with the models whose id, alias or name contains q (case-insensitive); all of
 * them when q is NULL. */
enum vf_err vf_catalog_search(struct vf_arena *a, const struct vf_catalog *c, const char *q,
                              struct vf_catalog *view, struct vf_error *err);

/* ---------------------------------------------------------------- renderers */

struct vf_render_opts {
    bool color;
    bool ascii; /* no Unicode block characters */
    const struct vf_catalog *catalog;
};

/* JSON texts (DESIGN section 8), allocated in a; byte-identical for CLI and HTTP. */
char *vf_render_estimate_json(struct vf_arena *a, const struct vf_estimate *e,
                              const struct vf_fit *fit);
char *vf_render_pick_json(struct vf_arena *a, const struct vf_estimate *e, const struct vf_pick *p,
                          const struct vf_workload *w);
char *vf_render_catalog_json(struct vf_arena *a, const struct vf_catalog *c, bool gpus);
/* An error as DESIGN section 8 has it, for the CLI under --json and the HTTP API:
 * {"error": {"code", "message", "hint"?}} (hint may be NULL). */
char *vf_render_error_json(struct vf_arena *a, const char *code, const char *message,
                           const char *hint);
/* The API's code of a library error ("bad_request", "not_found", "too_large", "unsupported",
 * "no_gpu", "upstream", "internal") and its HTTP status (400 ... 500) when http_status is set. */
const char *vf_err_api_code(enum vf_err code, unsigned *http_status);
/* Human text, allocated in a. */
char *vf_render_estimate_text(struct vf_arena *a, const struct vf_estimate *e,
                              const struct vf_fit *fit, const struct vf_render_opts *o);
char *vf_render_pick_text(struct vf_arena *a, const struct vf_estimate *e, const struct vf_pick *p,
                          const struct vf_workload *w, double hours,
                          const struct vf_render_opts *o);
char *vf_render_catalog_text(struct vf_arena *a, const struct vf_catalog *c, bool gpus);
/* `catalog prices`: every offer with where it comes from (struct vf_offer.origin). */
char *vf_render_prices_text(struct vf_arena *a, const struct vf_catalog *c);
char *vf_render_prices_json(struct vf_arena *a, const struct vf_catalog *c);
/* The GPUs of a snapshot: a table like nvidia-smi's with the processes named, and one line
 * per GPU saying who holds the memory and how to free it (vramfit smi). */
char *vf_render_gpus_text(struct vf_arena *a, const struct vf_gpu_snapshot *s,
                          const struct vf_render_opts *o);
char *vf_render_gpus_json(struct vf_arena *a, const struct vf_gpu_snapshot *s);
/* One (tool, cause) counter of out-of-memory errors seen (vramfit_oom_events_total). */
struct vf_oom_count {
    const char *tool, *cause;
    uint64_t n;
};
/* What /metrics shows besides the GPUs. */
struct vf_metrics_info {
    const char *hostname;    /* the Hostname label (dcgm-exporter's): the node's name */
    const char *revision;    /* vramfit_build_info's revision label (a commit), or NULL */
    const char *probe_error; /* why the GPUs could not be read (s is then NULL), or NULL */
    double scrape_seconds;   /* how long reading the GPUs took */
    const struct vf_oom_count *oom;
    size_t n_oom;
};
/* The Prometheus text exposition of `vramfit exporter` /metrics (README "Across a fleet"):
 * vramfit_build_info, vramfit_gpu_probe_success, vramfit_gpu_memory_{total,used,free,
 * reserved}_bytes and vramfit_gpu_utilization_ratio {gpu, UUID, modelName, Hostname} (the
 * labels dcgm-exporter gives the same figures), vramfit_process_gpu_memory_bytes {gpu, UUID,
 * Hostname, pid, command, container, pod_uid}, vramfit_oom_events_total {Hostname, tool,
 * cause}, vramfit_scrape_duration_seconds. Base units. s may be NULL (m->probe_error says
 * why). */
char *vf_render_metrics(struct vf_arena *a, const struct vf_gpu_snapshot *s,
                        const struct vf_metrics_info *m);
/* Every metric name vf_render_metrics can write, NULL-terminated (tests check dashboards). */
extern const char *const vf_metric_names[];

/* ------------------------------------------------------- following logs */

/*
 * Following logs as `tail -F` does (explain --follow, exporter --follow): each poll reads
 * what was appended to each file since the last one, across rotation (the path names a new
 * file: the old one is read to its end first) and truncation (the file shrank: read from its
 * start), and explains each new out-of-memory error with up to VF_FOLLOW_CONTEXT bytes of the
 * lines before it as context. A file that does not exist yet is waited for. What a file held
 * when it was first opened is context, never counted.
 */
#define VF_FOLLOW_MAX_FILES 16
#define VF_FOLLOW_CONTEXT   ((size_t)128 << 10)
struct vf_follow;
/* What one poll found in one file: n_new events (n_new >= 1), explained in x (its last). */
struct vf_follow_hit {
    const char *path;
    const struct vf_explain *x;
    uint64_t n_new;
};
enum vf_err vf_follow_open(struct vf_follow **out, const char *const *paths, size_t n,
                           struct vf_error *err);
/* Reads each file's new lines; calls hit(ud, &h) for each file with new events, h valid
 * during the call. c and w as vf_answer_explain_text takes them. */
enum vf_err vf_follow_poll(struct vf_follow *f, const struct vf_catalog *c, struct vf_workload *w,
                           void (*hit)(void *ud, const struct vf_follow_hit *h), void *ud,
                           struct vf_error *err);
void vf_follow_close(struct vf_follow *f);
/* What a model holds (vramfit inspect): architecture, parameters, weights, KV per token. */
char *vf_render_inspect_text(struct vf_arena *a, const struct vf_model *m,
                             const struct vf_render_opts *o);
char *vf_render_inspect_json(struct vf_arena *a, const struct vf_model *m);

#ifdef __cplusplus
}
#endif

#endif /* VRAMFIT_H */
