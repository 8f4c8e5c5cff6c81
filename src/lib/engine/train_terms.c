/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_terms.c - the term functions the two training engines share (est_train.c for
 * language models, est_train_diffusion.c for denoisers): the knobs they read alike, the bytes
 * per trained parameter and the sharding of the model states, the estimate's header, the
 * activations under full recomputation, the runtime overhead and the total. Formulas
 * F-TRAIN-nn in docs/FORMULAS.md ("Training").
 */
#include "est_train.h"
#include "engine/runtime.h"
#include "engine/terms.h"

#include <string.h>

/* F-TRAIN-09: what eager module loading adds to the CUDA context: PyTorch PR #86509 measured
 * cudaMemGetInfo's used bytes with one 6.4 MB tensor on the same GPU as 287,047,680 under
 * CUDA_MODULE_LOADING=LAZY and 666,632,192 under DEFAULT (eager before CUDA 12.2):
 * 379,584,512 B more. PyTorch >= 1.13 sets CUDA_MODULE_LOADING=LAZY when it is unset
 * (torch/cuda/__init__.py _lazy_init), so lazy is the default of every modelled stack. */
#define TRAIN_EAGER_CONTEXT 379584512ULL

/* F-TRAIN-22: knob `bit` of t given by the user (it wins over the preset)? */
static bool given(const struct vf_train_opts *t, uint32_t bit)
{
    return (t->given & bit) != 0;
}

/* A denoiser's run without --framework: the knobs as given, nothing turned on (the LLM
 * stacks' presets are not diffusers' training scripts'). */
static const struct vf__train_preset as_given = {
    .fw = VF_FW_DEFAULT,
    .name = "none",
    .version = "0",
    .source = "the knobs as given",
    .gc = VF_GC_NONE,
    .prec = VF_PREC_BF16,
    .opt = VF_OPT_ADAMW,
    .logit_bytes = 12,
};

void vf__train_knobs(const struct vf_workload *w, struct vf__train_run *r, bool preset)
{
    const struct vf_train_opts *t = &w->train;
    const struct vf__train_preset *p = preset || t->framework != VF_FW_DEFAULT
                                           ? vf__train_preset(t->framework, t->framework_version)
                                           : &as_given;
    memset(r, 0, sizeof *r);
    r->preset = p;
    r->method = t->method;
    /* F-TRAIN-22: what the user gave, else the preset's default. A field set without its
     * bit (a library caller filling the struct) counts as given when it is not the zero
     * value. */
    r->opt = given(t, VF_TK_OPTIMIZER) || t->optimizer ? t->optimizer : p->opt;
    r->prec = given(t, VF_TK_PRECISION) || t->precision ? t->precision : p->prec;
    r->gc = given(t, VF_TK_GRAD_CKPT) || t->grad_checkpointing ? t->grad_checkpointing : p->gc;
    /* F-TRAIN-23: PEFT's prepare_model_for_kbit_training (use_gradient_checkpointing=True by
     * default) turns checkpointing on for a QLoRA run of the stacks that call it */
    r->kbit_prep = p->kbit_prep && t->method == VF_TRAIN_QLORA;
    if (r->kbit_prep && !given(t, VF_TK_GRAD_CKPT) && r->gc == VF_GC_NONE)
        r->gc = VF_GC_FULL;
    bool kernels = given(t, VF_TK_LIGER) || t->liger ? t->liger : p->kernels;
    r->liger = kernels;
    /* Liger named: its fused linear cross-entropy; else the preset's loss */
    r->fused_ce = (kernels && (given(t, VF_TK_LIGER) || t->liger)) ||
                  (!given(t, VF_TK_CE) && !t->ce_chunks && p->fused_ce);
    r->ce_chunks = given(t, VF_TK_CE) || t->ce_chunks ? t->ce_chunks : p->ce_chunks;
    r->compile = given(t, VF_TK_COMPILE) || t->compile ? t->compile : p->compile;
    r->eager = t->eager_modules; /* F-TRAIN-09: lazy unless told */
    r->in_bwd =
        t->optimizer_in_bwd || (p->fw == VF_FW_TORCHTUNE && t->method == VF_TRAIN_FULL &&
                                !given(t, VF_TK_OPTIMIZER) && t->offload == VF_OFFLOAD_NONE);
    if (p->fw == VF_FW_TORCHTUNE && t->method == VF_TRAIN_FULL && !given(t, VF_TK_OPTIMIZER) &&
        !t->optimizer)
        r->opt = VF_OPT_PAGED_ADAMW8BIT; /* 8B_full_single_device.yaml PagedAdamW8bit */
    r->logit_bytes = p->logit_bytes;
    r->fused_saved = r->fused_ce && !given(t, VF_TK_LIGER) && !t->liger ? p->fused_saved : 0;
    r->acct = t->accounting;
    r->accum = t->grad_accum ? t->grad_accum : 1;
    r->rank = t->lora_rank ? t->lora_rank : TRAIN_DEFAULT_RANK;
    r->n = w->gpus ? w->gpus : 1;
    r->u = r->prec == VF_PREC_FP32 ? 4 : 2; /* F-TRAIN-11 */
    r->fa = !t->no_flash_attn;
    r->offload = t->offload;
}

void vf__train_states_of(const struct vf__train_run *r, bool whole, struct vf__train_states_in *in)
{
    bool pure = r->prec == VF_PREC_PURE_BF16, fp32 = r->prec == VF_PREC_FP32;
    bool ds = r->acct == VF_ACCT_DEEPSPEED;
    /* F-TRAIN-03/13: sharded by the stage over the group, offloaded as asked */
    *in = (struct vf__train_states_in){.stage = r->zero, .n_gpus = r->n, .group = r->group};
    in->offload = r->offload;
    in->accounting = r->acct;
    in->zero_init = true; /* Hugging Face's default under ZeRO-3 */
    if (whole) {
        /* F-TRAIN-01/11/12: 16-bit weights (fp32 with --precision fp32), gradients alike but
         * fp32 in DeepSpeed's accounting unless pure bf16, an fp32 master copy under mixed
         * precision */
        in->w_bytes = fp32 ? 4 : 2;
        in->g_bytes = fp32 || (ds && !pure) ? 4 : 2;
        in->master_bytes = fp32 || pure ? 0 : 4;
    } else {
        /* F-TRAIN-04: PEFT keeps adapters and their gradients in fp32 (bf16 under pure bf16),
         * no master copy */
        in->w_bytes = in->g_bytes = pure ? 2 : 4;
    }
}

const char *vf__train_shard_note(struct vf_arena *a, const struct vf__train_run *r)
{
    if (r->group > 1 && r->zero > 0)
        return vf_arena_printf(a, ", sharded over %u GPUs (ZeRO-%u)", r->group, r->zero);
    return "";
}

void vf__train_header(struct vf_estimate *e, const struct vf_model *m, const struct vf_workload *w,
                      const struct vf__train_run *r, bool whole, uint64_t users, uint64_t ctx)
{
    e->model = *m;
    e->engine = vf__engine_pytorch.name;
    e->task = VF_TASK_TRAIN;
    e->weights = r->base;
    e->gpus = r->n;
    e->ctx_tokens = ctx;
    e->users = users;
    e->train = w->train;
    /* F-TRAIN-22: the knobs as resolved, the preset's defaults included */
    if (r->preset) {
        e->train.framework = r->preset->fw;
        e->train.framework_version = r->preset->version;
    }
    e->train.optimizer = r->opt;
    e->train.precision = r->prec;
    e->train.grad_checkpointing = r->gc;
    e->train.liger = r->liger && !r->compile;
    e->train.ce_chunks = r->ce_chunks;
    e->train.compile = r->compile;
    e->train.optimizer_in_bwd = r->in_bwd;
    e->train.batch = (uint32_t)r->batch;
    e->train.lora_rank = whole ? 0 : (uint32_t)r->rank;
    e->train.zero = (enum vf_zero)(VF_ZERO_0 + r->zero);
}

uint64_t vf__train_ckpt_per_token(uint64_t n_saved, unsigned u, uint64_t h, uint64_t max_layer)
{
    return vf__sat_add(vf__sat_mul(n_saved, u * h), max_layer);
}

void vf__train_add_overhead(struct vf_estimate *e, uint64_t transient, bool eager)
{
    uint64_t b = vf__term_torch_overhead(transient);
    vf__add_component(e, "runtime_overhead", eager ? vf__sat_add(b, TRAIN_EAGER_CONTEXT) : b, NULL,
                      eager ? "CUDA context (eager module loading), cuBLAS, allocator slack"
                            : "CUDA context, cuBLAS, allocator slack");
}

void vf__train_total(struct vf_estimate *e, uint64_t host_bytes)
{
    e->total_bytes = vf__gpu_total(e, 0);
    e->host_bytes = host_bytes;
}
