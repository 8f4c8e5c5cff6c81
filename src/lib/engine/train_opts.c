/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_opts.c - the workload knobs by name: the names vramfit prints for each enum value,
 * vf_train_set (training) and vf_diffusion_set (image/video), which take a knob as the CLI,
 * the web API or a config spells it. One table
 * per knob holds every accepted spelling (ours first, then the engines': Hugging Face
 * TrainingArguments, LLaMA-Factory, torchtune, PyTorch FSDP, DeepSpeed).
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

struct spelling {
    const char *name;
    int value;
};

#define END     \
    {           \
        NULL, 0 \
    }

static const struct spelling methods[] = {
    {"full", VF_TRAIN_FULL},
    {"lora", VF_TRAIN_LORA},
    {"qlora", VF_TRAIN_QLORA},
    {"freeze", VF_TRAIN_FREEZE},
    END,
};

static const struct spelling optimizers[] = {
    {"adamw", VF_OPT_ADAMW},
    {"adamw8bit", VF_OPT_ADAMW8BIT},
    {"sgd", VF_OPT_SGD},
    {"paged_adamw8bit", VF_OPT_PAGED_ADAMW8BIT},
    {"adafactor", VF_OPT_ADAFACTOR},
    {"lion", VF_OPT_LION},
    /* Hugging Face TrainingArguments.optim and bitsandbytes class names */
    {"adamw_torch", VF_OPT_ADAMW},
    {"adamw_torch_fused", VF_OPT_ADAMW},
    {"adam", VF_OPT_ADAMW},
    {"adamw_bnb_8bit", VF_OPT_ADAMW8BIT},
    {"adamw_8bit", VF_OPT_ADAMW8BIT},
    {"paged_adamw_8bit", VF_OPT_PAGED_ADAMW8BIT},
    {"lion_32bit", VF_OPT_LION},
    END,
};

static const struct spelling precisions[] = {
    {"bf16", VF_PREC_BF16},
    {"fp16", VF_PREC_FP16},
    {"fp32", VF_PREC_FP32},
    {"pure-bf16", VF_PREC_PURE_BF16},
    {"pure_bf16", VF_PREC_PURE_BF16},
    {"no", VF_PREC_FP32},
    END,
};

static const struct spelling ckpts[] = {
    {"none", VF_GC_NONE},           {"full", VF_GC_FULL},
    {"selective", VF_GC_SELECTIVE}, {"off", VF_GC_NONE},
    {"false", VF_GC_NONE},          {"on", VF_GC_FULL},
    {"true", VF_GC_FULL},           {"offload", VF_GC_OFFLOAD},
    {"unsloth", VF_GC_OFFLOAD},     END,
};

static const struct spelling fsdps[] = {
    {"full_shard", VF_FSDP_FULL_SHARD},
    {"shard_grad_op", VF_FSDP_SHARD_GRAD_OP},
    {"hybrid_shard", VF_FSDP_HYBRID_SHARD},
    {"no_shard", VF_FSDP_NO_SHARD},
    END,
};

static const struct spelling offloads[] = {
    {"none", VF_OFFLOAD_NONE},
    {"optimizer", VF_OFFLOAD_OPTIMIZER},
    {"params", VF_OFFLOAD_PARAMS},
    {"cpu", VF_OFFLOAD_OPTIMIZER},
    END,
};

static const struct spelling accountings[] = {
    {"zero", VF_ACCT_ZERO},
    {"deepspeed", VF_ACCT_DEEPSPEED},
    {"hf", VF_ACCT_DEEPSPEED},
    END,
};

/* issue 22: the frameworks --framework names (their primary names first). */
static const struct spelling frameworks[] = {
    {"default", VF_FW_DEFAULT},
    {"hf", VF_FW_HF},
    {"trl", VF_FW_TRL},
    {"unsloth", VF_FW_UNSLOTH},
    {"torchtune", VF_FW_TORCHTUNE},
    {"axolotl", VF_FW_AXOLOTL},
    {"llama-factory", VF_FW_LLAMA_FACTORY},
    {"torchtitan", VF_FW_TORCHTITAN},
    {"deepspeed", VF_FW_DEEPSPEED},
    {"transformers", VF_FW_HF},
    {"llamafactory", VF_FW_LLAMA_FACTORY},
    END,
};

static const struct spelling switches[] = {
    {"on", 1}, {"off", 0}, {"true", 1}, {"false", 0}, {"1", 1}, {"0", 0}, END,
};

/* issue 22, F-TRAIN-09: CUDA_MODULE_LOADING (CUDA >= 11.7; "default" is eager before 12.2) */
static const struct spelling loadings[] = {
    {"lazy", 0},
    {"eager", 1},
    {"default", 1},
    END,
};

static const struct spelling dif_offloads[] = {
    {"none", VF_DOFF_NONE},
    {"lowvram", VF_DOFF_LOWVRAM},
    {"novram", VF_DOFF_NOVRAM},
    {"block-swap", VF_DOFF_BLOCK_SWAP},
    {"model-cpu", VF_DOFF_MODEL_CPU},
    {"sequential", VF_DOFF_SEQUENTIAL},
    {"group", VF_DOFF_SEQUENTIAL},
    {"enable_model_cpu_offload", VF_DOFF_MODEL_CPU},
    {"enable_sequential_cpu_offload", VF_DOFF_SEQUENTIAL},
    END,
};

static const struct spelling te_places[] = {
    {"gpu", VF_TE_GPU},
    {"cpu", VF_TE_CPU},
    {"offload-after-encode", VF_TE_OFFLOAD_AFTER},
    END,
};

static const struct spelling vae_decodes[] = {{"full", 0}, {"tiled", 1}, {"sliced", 2},
                                              {"tiny", 3}, {"taesd", 3}, END};

static const struct spelling cfgs[] = {{"on", VF_CFG_ON}, {"off", VF_CFG_OFF}, END};

/* diffusers' processors: AttnProcessor2_0 (SDPA, the default with torch >= 2) or AttnProcessor
 * (set_default_attn_processor(), or a stack without SDPA) */
static const struct spelling attentions[] = {
    {"sdpa", 0}, {"AttnProcessor2_0", 0}, {"eager", 1}, {"AttnProcessor", 1}, END};

static const struct spelling stages[] = {
    {"0", VF_ZERO_0}, {"1", VF_ZERO_1}, {"2", VF_ZERO_2}, {"3", VF_ZERO_3}, END,
};

/* The printed name: the first spelling of the value. */
static const char *name_of(const struct spelling *t, int v)
{
    for (; t->name; t++)
        if (t->value == v)
            return t->name;
    return "?";
}

const char *vf_train_method_name(enum vf_train_method m)
{
    return name_of(methods, (int)m);
}

const char *vf_optimizer_name(enum vf_optimizer o)
{
    return name_of(optimizers, (int)o);
}

const char *vf_precision_name(enum vf_precision p)
{
    return name_of(precisions, (int)p);
}

const char *vf_grad_ckpt_name(enum vf_grad_ckpt g)
{
    return name_of(ckpts, (int)g);
}

const char *vf_framework_name(enum vf_framework f)
{
    return f == VF_FW_DEFAULT ? "trl" : name_of(frameworks, (int)f);
}

const char *vf_fsdp_name(enum vf_fsdp f)
{
    return f == VF_FSDP_NONE ? "none" : name_of(fsdps, (int)f);
}

const char *vf_offload_name(enum vf_offload o)
{
    return name_of(offloads, (int)o);
}

const char *vf_accounting_name(enum vf_accounting a)
{
    return name_of(accountings, (int)a);
}

const char *vf_dif_offload_name(enum vf_dif_offload o)
{
    return name_of(dif_offloads, (int)o);
}

/* Case-insensitive; '-' and '_' are the same letter (FULL_SHARD, full-shard). */
static bool same(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x == '-')
            x = '_';
        if (y == '-')
            y = '_';
        if (x != y)
            return false;
    }
    return *a == *b;
}

/* Looks value up in t; VF_EINVAL listing the values of t when it is not there. */
static enum vf_err lookup(const struct spelling *t, const char *key, const char *value, int *out,
                          struct vf_error *err)
{
    if (value)
        for (const struct spelling *s = t; s->name; s++)
            if (same(s->name, value)) {
                *out = s->value;
                return VF_OK;
            }
    char list[256] = "";
    size_t n = 0;
    for (const struct spelling *s = t; s->name && n < sizeof list - 64; s++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", s->name);
    return vf__errf(err, VF_EINVAL, "%s: unknown value '%s' (accepted: %s)", key,
                    value ? value : "", list);
}

/* issue 22: "--framework NAME[@VERSION]": the name looked up, the version kept as given. */
static enum vf_err set_framework(struct vf_train_opts *t, const char *value, struct vf_error *err)
{
    char name[32];
    const char *at = value ? strchr(value, '@') : NULL;
    size_t n = at ? (size_t)(at - value) : value ? strlen(value) : 0;
    if (n >= sizeof name)
        n = sizeof name - 1;
    if (value)
        memcpy(name, value, n);
    name[n] = '\0';
    int v;
    enum vf_err rc = lookup(frameworks, "framework", name, &v, err);
    if (rc)
        return rc;
    if (at && !at[1])
        return vf__errf(err, VF_EINVAL, "framework: '%s' names no version after '@'", value);
    t->framework = (enum vf_framework)v;
    t->framework_version = at ? at + 1 : NULL;
    return VF_OK;
}

/* The knobs vf_train_set looks up in a table, with the VF_TK_* bit each sets. */
static const struct {
    const char *key;
    const struct spelling *table;
    uint32_t bit;
} knobs[] = {
    {"method", methods, 0},
    {"optimizer", optimizers, VF_TK_OPTIMIZER},
    {"precision", precisions, VF_TK_PRECISION},
    {"grad-checkpointing", ckpts, VF_TK_GRAD_CKPT},
    {"flash-attn", switches, 0},
    {"fsdp", fsdps, 0},
    {"offload", offloads, 0},
    {"accounting", accountings, 0},
    {"liger", switches, VF_TK_LIGER},
    {"zero", stages, 0},
    {"optimizer-in-bwd", switches, 0},
    {"compile", switches, VF_TK_COMPILE},
    {"cuda-module-loading", loadings, 0},
};

/* Knob i of `knobs` set to v. */
static void set_knob(struct vf_train_opts *t, size_t i, int v)
{
    switch (i) {
    case 0:
        t->method = (enum vf_train_method)v;
        break;
    case 1:
        t->optimizer = (enum vf_optimizer)v;
        break;
    case 2:
        t->precision = (enum vf_precision)v;
        break;
    case 3:
        t->grad_checkpointing = (enum vf_grad_ckpt)v;
        break;
    case 4:
        t->no_flash_attn = !v;
        break;
    case 5:
        t->fsdp = (enum vf_fsdp)v;
        break;
    case 6:
        t->offload = (enum vf_offload)v;
        break;
    case 7:
        t->accounting = (enum vf_accounting)v;
        break;
    case 8:
        t->liger = v != 0;
        break;
    case 9:
        t->zero = (enum vf_zero)v;
        break;
    case 10:
        t->optimizer_in_bwd = v != 0;
        break;
    case 11:
        t->compile = v != 0;
        break;
    default:
        t->eager_modules = v != 0;
        break;
    }
}

enum vf_err vf_train_set(struct vf_train_opts *t, const char *key, const char *value,
                         struct vf_error *err)
{
    if (!key)
        return vf__errf(err, VF_EINVAL, "training knob: no name given");
    if (same(key, "lora-targets")) {
        if (!value || !*value)
            return vf__errf(err, VF_EINVAL,
                            "lora-targets: expected all-linear or a list such "
                            "as q,k,v,o");
        t->lora_targets = same(value, "all-linear") ? NULL : value;
        return VF_OK;
    }
    if (same(key, "framework"))
        return set_framework(t, value, err);
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        if (!same(knobs[i].key, key))
            continue;
        int v;
        enum vf_err rc = lookup(knobs[i].table, knobs[i].key, value, &v, err);
        if (rc)
            return rc;
        set_knob(t, i, v);
        t->given |= knobs[i].bit;
        return VF_OK;
    }
    return vf__errf(err, VF_EINVAL,
                    "training knob '%s' is unknown (method, optimizer, precision, "
                    "grad-checkpointing, flash-attn, fsdp, offload, accounting, liger, zero, "
                    "optimizer-in-bwd, compile, cuda-module-loading, framework, lora-targets)",
                    key);
}

enum vf_err vf_diffusion_set(struct vf_diffusion_opts *d, const char *key, const char *value,
                             struct vf_error *err)
{
    int v;
    enum vf_err rc;
    if (key && same(key, "offload")) {
        if (!(rc = lookup(dif_offloads, "offload", value, &v, err)))
            d->offload = (enum vf_dif_offload)v;
    } else if (key && same(key, "text-encoder")) {
        if (!(rc = lookup(te_places, "text-encoder", value, &v, err)))
            d->text_encoder = (enum vf_te_place)v;
    } else if (key && same(key, "vae-decode")) {
        if (!(rc = lookup(vae_decodes, "vae-decode", value, &v, err))) {
            d->tiled_vae = v == 1; /* one mode at a time (F-DIF-16) */
            d->sliced_vae = v == 2;
            d->tiny_vae = v == 3;
        }
    } else if (key && same(key, "cfg")) {
        if (!(rc = lookup(cfgs, "cfg", value, &v, err)))
            d->cfg = (enum vf_cfg)v;
    } else if (key && same(key, "attention")) {
        if (!(rc = lookup(attentions, "attention", value, &v, err)))
            d->eager_attn = v == 1;
    } else {
        rc = vf__errf(err, VF_EINVAL,
                      "image/video knob '%s' is unknown (offload, text-encoder, vae-decode, cfg, "
                      "attention)",
                      key ? key : "");
    }
    return rc;
}
