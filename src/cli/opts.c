/*
 * opts.c - the flags every workload command takes, in our spelling and in the engines'
 * (DESIGN section 8), the catalog and card resolution.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct vf_catalog *cli_catalog(const char *data_dir)
{
    struct vf_catalog *shared = cli_shared_catalog();
    if (shared)
        return shared;
    if (!data_dir)
        data_dir = getenv("VRAMFIT_DATA_DIR");
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    if (vf_catalog_open(&c, data_dir, &err)) {
        cli_lib_error(&err);
        return NULL;
    }
    return c;
}

/* ------------------------------------------------------------------ parsing */

/* Which flag is this, with the value it takes (inline "--x=v" or the next argument). */
static bool is(const char *arg, const char *const *names, const char **inline_val)
{
    for (size_t i = 0; names[i]; i++) {
        size_t l = strlen(names[i]);
        if (!strncmp(arg, names[i], l) && (arg[l] == 0 || arg[l] == '=')) {
            *inline_val = arg[l] == '=' ? arg + l + 1 : NULL;
            return true;
        }
    }
    return false;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The engine's own flag `arg` ("--gpu-memory-utilization", "-ngl=20", "num_ctx=8192"), or
 * NULL; *inline_val gets a value given with '='. */
static const struct vf_engine_flag *engine_flag(const struct vf_engine *e, const char *arg,
                                                const char **inline_val)
{
    *inline_val = NULL;
    for (const struct vf_engine_flag *f = e && e->flags ? e->flags : NULL; f && f->name; f++) {
        const char *names[] = {f->name, f->alias, NULL};
        for (size_t i = 0; names[i]; i++) {
            size_t l = strlen(names[i]);
            if (!strncmp(arg, names[i], l) && (arg[l] == 0 || arg[l] == '=')) {
                *inline_val = arg[l] == '=' ? arg + l + 1 : NULL;
                return f;
            }
        }
    }
    return NULL;
}

/* Adds an engine option (its primary name); a repeated one takes the last value. */
static int add_engine_opt(const char *cmd, struct cli_opts *o, const char *key, const char *val)
{
    struct vf_engine_opts *eo = &o->w.opts;
    for (size_t i = 0; i < eo->n; i++)
        if (!strcmp(eo->key[i], key)) {
            eo->value[i] = val;
            return 0;
        }
    if (eo->n == VF_MAX_ENGINE_OPTS)
        return cli_usage(cmd, "more than %d engine options", VF_MAX_ENGINE_OPTS);
    eo->key[eo->n] = key;
    eo->value[eo->n] = val;
    eo->n++;
    return 0;
}

/* --res presets: the video heights (16:9 landscape) and square image sides. */
static bool res_preset(const char *v, unsigned *w, unsigned *h)
{
    static const struct {
        const char *name;
        unsigned w, h;
    } p[] = {{"1080p", 1920, 1080}, {"720p", 1280, 720}, {"480p", 832, 480},
             {"1024", 1024, 1024},  {"768", 768, 768},   {"512", 512, 512}};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (!strcmp(v, p[i].name)) {
            *w = p[i].w;
            *h = p[i].h;
            return true;
        }
    return false;
}

/* F-TRAIN-18: torchtune's CEWithChunkedOutputLoss default, num_output_chunks = 8. */
#define CLI_CE_CHUNKS 8

/* The training knobs vf_train_set takes, by flag (ours, then the engines' spellings). */
struct knob {
    const char *const *names;
    const char *key;
    const char *bare; /* the value of the flag given alone, NULL: it needs one */
};

static bool train_knob(const char *arg, const char **val, struct knob *out)
{
    const struct knob knobs[] = {
        {NAMES("--method", "--finetuning-type"), "method", NULL},
        {NAMES("--optimizer", "--optim"), "optimizer", NULL},
        {NAMES("--precision", "--mixed-precision"), "precision", NULL},
        {NAMES("--grad-checkpointing", "--gradient-checkpointing"), "grad-checkpointing", "full"},
        {NAMES("--flash-attn"), "flash-attn", "on"},
        {NAMES("--fsdp"), "fsdp", "full_shard"},
        {NAMES("--zero", "--zero-stage"), "zero", NULL},
        {NAMES("--accounting"), "accounting", NULL},
        {NAMES("--liger", "--use-liger-kernel"), "liger", "on"},
        {NAMES("--optimizer-in-bwd", "--optimizer-in-backward"), "optimizer-in-bwd", "on"},
        {NAMES("--lora-targets", "--lora-target", "--target-modules"), "lora-targets", NULL},
    };
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
        if (is(arg, knobs[i].names, val)) {
            *out = knobs[i];
            return true;
        }
    return false;
}

int cli_parse_opts(const char *cmd, int argc, char **argv, unsigned allow, struct cli_opts *o)
{
    memset(o, 0, sizeof *o);
    /* the engine first: its own flags are known only then */
    const struct vf_engine *engine = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--engine") && i + 1 < argc)
            engine = vf_engine_find(argv[i + 1]);
        else if (!strncmp(argv[i], "--engine=", 9))
            engine = vf_engine_find(argv[i] + 9);
    }
    o->w.task = VF_TASK_INFER;
    o->w.engine = NULL; /* the task's default engine */
    struct vf_error err = {0};
    uint64_t np = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        const char *flag = arg;
        struct knob knob;
#define VALUE()                                                         \
    do {                                                                \
        if (!val) {                                                     \
            if (i + 1 >= argc)                                          \
                return cli_usage(cmd, "flag '%s' needs a value", flag); \
            val = argv[++i];                                            \
        }                                                               \
    } while (0)
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            o->help = true;
        } else if (!strcmp(arg, "--json")) {
            o->json = true;
        } else if (!strcmp(arg, "--ascii")) {
            o->ascii = true;
        } else if (!strcmp(arg, "--force")) {
            o->w.force = true;
        } else if (is(arg, NAMES("--ctx", "--max-model-len", "--num-ctx", "--num_ctx", "--context"),
                      &val)) {
            VALUE();
            if (vf_parse_tokens(val, &o->w.ctx_tokens, &err) || !o->w.ctx_tokens)
                return cli_usage(cmd, "%s: %s", flag,
                                 err.msg[0] ? err.msg : "the context must be at least 1 token");
            o->ctx_flag = flag;
        } else if (is(arg, NAMES("-c", "--ctx-size"), &val)) {
            VALUE();
            if (vf_parse_tokens(val, &o->llamacpp_total_ctx, &err) || !o->llamacpp_total_ctx)
                return cli_usage(cmd, "%s: %s", flag,
                                 err.msg[0] ? err.msg : "the context must be at least 1 token");
        } else if (is(arg, NAMES("--users", "--concurrency"), &val)) {
            VALUE();
            if (vf_parse_count(val, &o->w.users, &err) || !o->w.users)
                return cli_usage(cmd, "%s: %s (expected a whole number of sequences, 1 or more)",
                                 flag, err.msg[0] ? err.msg : "zero users");
        } else if (is(arg, NAMES("-np", "--parallel", "--num-parallel"), &val)) {
            VALUE();
            if (vf_parse_count(val, &np, &err) || !np)
                return cli_usage(cmd, "%s: expected a number of slots, 1 or more", flag);
        } else if (is(arg, NAMES("--weights", "--quant", "--quantization"), &val)) {
            VALUE();
            if (vf_quant_parse(val, &o->w.weights, &err))
                return cli_usage(cmd, "%s: %s", flag, err.msg);
        } else if (is(arg, NAMES("--kv-dtype", "--kv-cache-dtype", "-ctk", "--cache-type-k"),
                      &val)) {
            VALUE();
            if (vf_kv_dtype_parse(val, &o->w.kv_dtype, &err))
                return cli_usage(cmd, "%s: %s", flag, err.msg);
        } else if (is(arg, NAMES("-ctv", "--cache-type-v"), &val)) {
            VALUE();
            o->ctv = val;
        } else if (is(arg, NAMES("--engine"), &val)) {
            VALUE();
            if (!vf_engine_find(val)) {
                size_t n;
                const struct vf_engine *const *all = vf_engines(&n);
                char list[256] = "";
                for (size_t k = 0; k < n; k++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                             all[k]->name);
                return cli_usage(cmd, "--engine: unknown engine '%s' (available: %s)", val, list);
            }
            o->w.engine = val;
        } else if (is(arg, NAMES("--task"), &val)) {
            VALUE();
            if (!strcmp(val, "infer"))
                o->w.task = VF_TASK_INFER;
            else if (!strcmp(val, "train"))
                o->w.task = VF_TASK_TRAIN;
            else if (!strcmp(val, "image"))
                o->w.task = VF_TASK_IMAGE;
            else if (!strcmp(val, "video"))
                o->w.task = VF_TASK_VIDEO;
            else
                return cli_usage(cmd, "--task: unknown task '%s' (infer, train, image, video)",
                                 val);
            o->task_set = true;
        } else if (train_knob(arg, &val, &knob)) {
            /* training knobs by name (vf_train_set); a switch may come without a value */
            if (!val && knob.bare) {
                struct vf_train_opts probe = o->w.train;
                if (i + 1 < argc && !vf_train_set(&probe, knob.key, argv[i + 1], NULL))
                    val = argv[++i];
                else
                    val = knob.bare;
            }
            VALUE();
            if (vf_train_set(&o->w.train, knob.key, val, &err))
                return cli_usage(cmd, "%s: %s", flag, err.msg);
        } else if (is(arg, NAMES("--batch", "--per-device-train-batch-size", "--batch-size"),
                      &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 65536)
                return cli_usage(cmd, "%s: expected a batch size from 1 to 65536", flag);
            o->w.train.batch = (uint32_t)n;
            o->w.diffusion.batch = (uint32_t)n;
        } else if (is(arg, NAMES("--seq", "--seq-len", "--max-seq-length", "--cutoff-len"), &val)) {
            VALUE();
            if (vf_parse_tokens(val, &o->w.ctx_tokens, &err) || !o->w.ctx_tokens)
                return cli_usage(cmd, "%s: %s", flag,
                                 err.msg[0] ? err.msg : "the sequence must be at least 1 token");
            o->ctx_flag = flag;
        } else if (is(arg, NAMES("--grad-accum", "--gradient-accumulation-steps"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 1048576)
                return cli_usage(cmd, "%s: expected a whole number of steps from 1 to 1048576",
                                 flag);
            o->w.train.grad_accum = (uint32_t)n;
        } else if (is(arg, NAMES("--freeze-layers", "--freeze-trainable-layers"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 65536)
                return cli_usage(cmd, "%s: expected a number of layers from 1 to 65536", flag);
            o->w.train.freeze_layers = (uint32_t)n;
        } else if (is(arg, NAMES("--chunked-ce"), &val)) {
            uint64_t n = CLI_CE_CHUNKS;
            if (!val && i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                val = argv[++i];
            if (val && (vf_parse_count(val, &n, &err) || n == 0 || n > 1024))
                return cli_usage(cmd, "%s: expected a number of chunks from 1 to 1024", flag);
            o->w.train.ce_chunks = (uint32_t)n;
        } else if (is(arg, NAMES("--cache-latents"), &val)) {
            o->w.train.cache_latents = true;
        } else if (is(arg, NAMES("--cache-text-embeddings", "--cache-text"), &val)) {
            o->w.train.cache_text = true;
        } else if (is(arg, NAMES("--lora-rank", "--lora-r"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 65536)
                return cli_usage(cmd, "%s: expected a rank from 1 to 65536", flag);
            o->w.train.lora_rank = (uint32_t)n;
        } else if (is(arg, NAMES("--width"), &val) || is(arg, NAMES("--height"), &val) ||
                   is(arg, NAMES("--frames", "--length", "--num-frames"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 16384)
                return cli_usage(cmd, "%s: expected a whole number from 1 to 16384", flag);
            if (!strncmp(flag, "--width", 7))
                o->w.diffusion.width = (uint32_t)n;
            else if (!strncmp(flag, "--height", 8))
                o->w.diffusion.height = (uint32_t)n;
            else
                o->w.diffusion.frames = (uint32_t)n;
        } else if (is(arg, NAMES("--resolution", "--size", "--res"), &val)) {
            VALUE();
            unsigned wd, ht;
            char tail;
            if (!res_preset(val, &wd, &ht) && (sscanf(val, "%ux%u%c", &wd, &ht, &tail) != 2 ||
                                               !wd || !ht || wd > 16384 || ht > 16384))
                return cli_usage(cmd,
                                 "%s: expected WIDTHxHEIGHT such as 1280x720, or 1080p, 720p, "
                                 "480p, 1024, 768, 512",
                                 flag);
            o->w.diffusion.width = wd;
            o->w.diffusion.height = ht;
        } else if (!strcmp(arg, "--vae-tiled") || !strcmp(arg, "--tiled-vae")) {
            o->w.diffusion.tiled_vae = true;
        } else if (is(arg, NAMES("--offload"), &val)) {
            /* training: none|optimizer|params; image/video: lowvram ... block-swap N */
            VALUE();
            struct vf_error e2 = {0};
            if (!vf_diffusion_set(&o->w.diffusion, "offload", val, NULL)) {
                if (!strcmp(val, "none"))
                    o->w.train.offload = VF_OFFLOAD_NONE;
                if (o->w.diffusion.offload == VF_DOFF_BLOCK_SWAP) {
                    uint64_t n;
                    if (i + 1 >= argc || vf_parse_count(argv[i + 1], &n, &err) || !n || n > 4096)
                        return cli_usage(cmd,
                                         "%s block-swap: expected the number of blocks "
                                         "to keep in host RAM (block-swap 20)",
                                         flag);
                    o->w.diffusion.block_swap = (uint32_t)n;
                    i++;
                }
            } else if (vf_train_set(&o->w.train, "offload", val, &e2)) {
                return cli_usage(cmd,
                                 "%s: unknown value '%s' (training: none, optimizer, params; "
                                 "image/video: lowvram, novram, block-swap N, model-cpu, "
                                 "sequential, group)",
                                 flag, val);
            }
        } else if (is(arg, NAMES("--text-encoder", "--vae-decode", "--cfg"), &val)) {
            VALUE();
            char key[16];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(flag + 2, "="), flag + 2);
            if (vf_diffusion_set(&o->w.diffusion, key, val, &err))
                return cli_usage(cmd, "%s", err.msg);
        } else if (is(arg, NAMES("--vae-dtype", "--vae-weights"), &val)) {
            VALUE();
            struct vf_quant vq;
            if (vf_quant_parse(val, &vq, &err) || vq.kind != VF_QK_PLAIN)
                return cli_usage(cmd, "%s: expected fp32, bf16 or fp16", flag);
            o->w.diffusion.vae_dtype = vq.dtype;
        } else if (is(arg, NAMES("--text-encoder-weights", "--te-weights"), &val)) {
            VALUE();
            if (vf_quant_parse(val, &o->w.diffusion.te_weights, &err))
                return cli_usage(cmd, "%s: %s", flag, err.msg);
        } else if (is(arg, NAMES("--tile"), &val) || is(arg, NAMES("--loras"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n > 16384 || (!n && flag[2] == 't'))
                return cli_usage(cmd, "%s: expected a whole number%s", flag,
                                 flag[2] == 't' ? " of pixels from 64 to 16384" : "");
            if (flag[2] == 't')
                o->w.diffusion.vae_tile = (uint32_t)n, o->w.diffusion.tiled_vae = true;
            else
                o->w.diffusion.loras = (uint32_t)n;
        } else if ((allow & CLI_OPT_CARD) && is(arg, NAMES("--gpu"), &val)) {
            VALUE();
            o->gpu = val;
        } else if ((allow & (CLI_OPT_CARD | CLI_OPT_COUNT)) &&
                   is(arg, NAMES("--gpus", "--tensor-parallel-size", "-tp"), &val)) {
            VALUE();
            uint64_t n;
            if (vf_parse_count(val, &n, &err) || n == 0 || n > 4096)
                return cli_usage(cmd, "%s: expected a number of GPUs from 1 to 4096", flag);
            o->gpus = (uint32_t)n;
        } else if ((allow & CLI_OPT_PRICE) && is(arg, NAMES("--hours"), &val)) {
            VALUE();
            char *end;
            o->hours = strtod(val, &end);
            if (*end || !(o->hours > 0) || o->hours > 100000)
                return cli_usage(cmd, "--hours: expected a duration in hours such as 2.5");
        } else if ((allow & CLI_OPT_PRICE) && is(arg, NAMES("--currency"), &val)) {
            VALUE();
            if (strlen(val) != 3)
                return cli_usage(cmd, "--currency: expected a three-letter code such as EUR");
            o->currency = val;
            o->pick.currency = val;
        } else if ((allow & CLI_OPT_PRICE) && is(arg, NAMES("--fx"), &val)) {
            VALUE();
            const char *eq = strchr(val, '=');
            uint64_t micro;
            if (!eq || eq - val != 3 || vf_parse_price(eq + 1, &micro, NULL) || !micro)
                return cli_usage(cmd, "--fx: expected CUR=RATE such as USD=0.92 (1 USD = 0.92 "
                                      "of the ranked currency)");
            if (o->pick.n_fx == VF_MAX_FX)
                return cli_usage(cmd, "--fx: at most %d rates", VF_MAX_FX);
            memcpy(o->pick.fx[o->pick.n_fx].from, val, 3);
            o->pick.fx[o->pick.n_fx].from[3] = 0;
            o->pick.fx[o->pick.n_fx].micro = micro;
            o->pick.n_fx++;
        } else if (is(arg, NAMES("--data-dir"), &val)) {
            VALUE();
            o->data_dir = val;
        } else if (engine_flag(engine, arg, &val)) {
            const struct vf_engine_flag *ef = engine_flag(engine, arg, &val);
            if (ef->takes_value)
                VALUE();
            else if (val)
                return cli_usage(cmd, "flag '%s' takes no value", ef->name);
            int erc = add_engine_opt(cmd, o, ef->name, val);
            if (erc)
                return erc;
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage(cmd, "unknown flag '%s'%s%s", arg, engine ? " for --engine " : "",
                             engine ? engine->name : "");
        } else if (!o->model) {
            o->model = arg;
        } else {
            return cli_usage(cmd, "one model at a time: '%s' and '%s'", o->model, arg);
        }
#undef VALUE
    }
    if (o->ctv) {
        enum vf_dtype v;
        if (vf_kv_dtype_parse(o->ctv, &v, &err))
            return cli_usage(cmd, "-ctv: %s", err.msg);
        if (v != o->w.kv_dtype)
            return cli_usage(cmd,
                             "-ctv %s differs from -ctk: give K and V the same type for "
                             "now (--kv-dtype)",
                             o->ctv);
    }
    /* llama.cpp: -c is the total context shared by the -np slots */
    if (np) {
        if (o->w.users && o->w.users != np)
            return cli_usage(cmd, "--users %llu and -np %llu disagree",
                             (unsigned long long)o->w.users, (unsigned long long)np);
        o->w.users = np;
    }
    if (o->llamacpp_total_ctx) {
        if (o->w.ctx_tokens)
            return cli_usage(cmd, "give the context once: --ctx (per sequence) or -c (llama.cpp's "
                                  "total, ctx x slots)");
        uint64_t users = o->w.users ? o->w.users : 1;
        o->w.ctx_tokens = o->llamacpp_total_ctx / users;
        if (!o->w.ctx_tokens)
            return cli_usage(cmd, "-c %llu over %llu slots leaves no context per slot",
                             (unsigned long long)o->llamacpp_total_ctx, (unsigned long long)users);
        o->ctx_flag = "-c";
    }
    /* an engine's environment variables (OLLAMA_*), unless a flag gave them */
    for (const struct vf_engine_flag *f = engine && engine->flags ? engine->flags : NULL;
         f && f->name; f++) {
        const char *env = strncmp(f->name, "OLLAMA_", 7) ? NULL : getenv(f->name);
        if (env && !vf_engine_opt(&o->w.opts, f->name)) {
            int erc = add_engine_opt(cmd, o, f->name, env);
            if (erc)
                return erc;
        }
    }
    if (!o->help && !o->model)
        return cli_usage(cmd, "which model? (a catalog id such as llama-3.1-8b)");
    return 0;
}

/* -------------------------------------------------------------------- cards */

/* The catalog card whose id, without dashes, appears in a device name such as
 * "NVIDIA GeForce RTX 4090"; the longest match wins. */
static const struct vf_gpu_spec *card_from_name(const struct vf_catalog *c, const char *name)
{
    char dev[128];
    size_t n = 0;
    for (const char *s = name; *s && n + 1 < sizeof dev; s++)
        if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
            dev[n++] = *s;
        else if (*s >= 'A' && *s <= 'Z')
            dev[n++] = (char)(*s - 'A' + 'a');
    dev[n] = 0;
    const struct vf_gpu_spec *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < c->n_gpus; i++) {
        char id[64];
        size_t k = 0;
        for (const char *s = c->gpus[i].id; *s && k + 1 < sizeof id; s++)
            if (*s != '-')
                id[k++] = *s;
        id[k] = 0;
        if (k > best_len && strstr(dev, id)) {
            best = &c->gpus[i];
            best_len = k;
        }
    }
    return best;
}

int cli_resolve_card(struct vf_arena *a, const struct vf_catalog *c, const struct cli_opts *o,
                     struct cli_card *out)
{
    memset(out, 0, sizeof *out);
    out->count = o->gpus ? o->gpus : 1;
    char *ref = vf_arena_strdup(a, o->gpu);
    char *colon = ref ? strrchr(ref, ':') : NULL;
    if (colon) {
        uint64_t n;
        struct vf_error err = {0};
        if (vf_parse_count(colon + 1, &n, &err) || n == 0 || n > 4096)
            return cli_usage("estimate", "--gpu %s: the count after ':' must be 1 to 4096", o->gpu);
        if (o->gpus && o->gpus != n)
            return cli_usage("estimate", "--gpu %s and --gpus %u disagree", o->gpu, o->gpus);
        *colon = 0;
        out->count = (uint32_t)n;
    }
    if (!strcmp(ref, "local")) {
        struct vf_gpu_snapshot snap;
        struct vf_error err = {0};
        if (vf_gpu_snapshot(a, &snap, &err))
            return cli_lib_error(&err);
        const struct vf_gpu_dev *d = &snap.devs[0];
        if (!o->gpus && !colon)
            out->count = (uint32_t)snap.n_devs;
        if (out->count > snap.n_devs)
            return cli_usage("estimate", "--gpu local: %u GPUs asked, %zu found", out->count,
                             snap.n_devs);
        /* the smallest free budget over the cards used */
        uint64_t budget = UINT64_MAX;
        for (uint32_t i = 0; i < out->count; i++) {
            const struct vf_gpu_dev *g = &snap.devs[i];
            const struct vf_gpu_spec *spec = card_from_name(c, g->name);
            uint64_t reserve =
                spec && spec->smi_bytes != VF_UNKNOWN && spec->smi_bytes > spec->usable_bytes
                    ? spec->smi_bytes - spec->usable_bytes
                    : (438ULL << 20);
            uint64_t usable = g->total_bytes > reserve ? g->total_bytes - reserve : 0;
            uint64_t free_now = usable > g->used_bytes ? usable - g->used_bytes : 0;
            if (free_now < budget)
                budget = free_now;
        }
        out->usable_bytes = budget;
        out->name = vf_arena_printf(a, "local GPU%s", out->count > 1 ? "s" : "");
        out->label = vf_arena_printf(a, "%s (free now)", d->name);
        out->note = "local: CUDA's total less what other processes use now";
        return 0;
    }
    /* a catalog card first ("4090" is a card), then a size with its unit ("23.65GiB") */
    const struct vf_gpu_spec *g = vf_catalog_gpu(c, ref);
    uint64_t bytes;
    struct vf_error err = {0};
    bool has_unit = strpbrk(ref, "KkMmGgTtBb") != NULL;
    if (!g && has_unit && !vf_parse_bytes(ref, &bytes, &err)) {
        if (bytes < (64ULL << 20))
            return cli_usage("estimate", "--gpu %s: a card of less than 64 MiB?", o->gpu);
        out->name = ref;
        out->label = ref;
        out->usable_bytes = bytes;
        return 0;
    }
    if (!g) {
        const struct vf_gpu_spec *near[8];
        size_t n = vf_catalog_gpu_suggest(c, ref, near, 8);
        char list[512] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     near[i]->id);
        if (n)
            cli_error("ambiguous card '%s': %s", ref, list);
        else
            cli_error("unknown card '%s' (a catalog id such as rtx-4090, 'vramfit catalog "
                      "gpus' lists them; or a size such as 23.65GiB or 24GB; or 'local')",
                      ref);
        return EXIT_USAGE;
    }
    out->name = g->id;
    out->label = g->name;
    out->usable_bytes = g->usable_bytes;
    return 0;
}

void cli_note_flags(struct vf_arena *a, const struct cli_opts *o, struct vf_estimate *e)
{
    if (!o->llamacpp_total_ctx || e->n_assumptions >= VF_MAX_ASSUMPTIONS)
        return;
    const char *s = vf_arena_printf(a,
                                    "context %llu tokens per sequence: llama.cpp's -c %llu is "
                                    "shared by %llu slots (-np)",
                                    (unsigned long long)o->w.ctx_tokens,
                                    (unsigned long long)o->llamacpp_total_ctx,
                                    (unsigned long long)(o->w.users ? o->w.users : 1));
    if (s)
        e->assumptions[e->n_assumptions++] = s;
}

void cli_default_engine(struct cli_opts *o, const struct vf_model *m)
{
    /* DESIGN section 8: a GGUF file runs on llama.cpp unless --engine says otherwise */
    if (!o->w.engine && o->w.task == VF_TASK_INFER && m->n_tensors && m->tensors &&
        m->tensors[0].ggml_type >= 0 && vf_engine_find("llama.cpp"))
        o->w.engine = "llama.cpp";
}
