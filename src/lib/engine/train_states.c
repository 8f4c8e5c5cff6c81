/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_states.c - the model states of a training run on one GPU and on the host: weights,
 * gradients, master copy and optimizer states per trained parameter, sharded by the ZeRO
 * stage (or FSDP strategy) and moved to host RAM by offload, in the ZeRO paper's accounting
 * or DeepSpeed's estimator's (F-TRAIN-01..03, 12, 13); optimizer-state bytes per tensor
 * (F-TRAIN-02, 14); the runtime overhead (F-TRAIN-09). Shared by est_train.c and
 * est_train_diffusion.c.
 */
#include "est_train.h"
#include "engine/runtime.h"

#include <string.h>

/* F-TRAIN-12: DeepSpeed's estimator: additional_buffer_factor 1.5 on host memory. */
#define DS_HOST_FACTOR_X2 3

uint64_t vf__train_opt_bytes(enum vf_optimizer o, uint64_t rows, uint64_t cols, uint64_t n_tensors,
                             bool half)
{
    uint64_t el = vf__sat_mul(rows, cols), s = half ? 2 : 4, per;
    switch (o) {
    case VF_OPT_SGD:  /* F-TRAIN-02: one momentum buffer */
    case VF_OPT_LION: /* F-TRAIN-14: one momentum buffer (Chen et al. 2023, Algorithm 2) */
        per = vf__sat_mul(el, s);
        break;
    case VF_OPT_ADAFACTOR:
        /* F-TRAIN-14: factored second moment, a row and a column vector per matrix, the
         * whole second moment for a vector; no first moment (beta1 = None, the default) */
        per = rows > 1 && cols > 1 ? vf__sat_mul(vf__sat_add(rows, cols), s) : vf__sat_mul(el, s);
        break;
    case VF_OPT_ADAMW8BIT:
    case VF_OPT_PAGED_ADAMW8BIT:
        /* F-TRAIN-02: uint8 m and v + one fp32 absmax each per block; small tensors fp32 */
        if (el < BNB_MIN_8BIT)
            per = vf__sat_mul(el, 8);
        else
            per = vf__sat_add(vf__sat_mul(el, 2), vf__sat_mul(vf__div_ceil(el, BNB_OPT_BLOCK), 8));
        break;
    default: /* F-TRAIN-02: AdamW m and v */
        per = vf__sat_mul(el, 2 * s);
        break;
    }
    return vf__sat_mul(per, n_tensors);
}

/* ceil(x / group) when the stage shards this state, else x. */
static uint64_t shard_by(uint64_t x, const struct vf__train_states_in *in, unsigned from_stage)
{
    if (x == VF_UNKNOWN || in->stage < from_stage || in->group <= 1)
        return x;
    return vf__div_ceil(x, in->group);
}

/* x * num / den, saturating (host shares of a node). */
static uint64_t scale(uint64_t x, uint64_t num, uint64_t den)
{
    if (x == VF_UNKNOWN || !den)
        return x;
    return vf__sat_mul(x / den, num) + (x % den) * num / den;
}

/*
 * F-TRAIN-29: the node's host RAM while the model loads, into out->host_load. Without
 * zero.Init every rank of the node builds the whole model in host RAM before the engine
 * shards it; under ZeRO-3 with deepspeed.zero.Init (runtime/zero/partition_parameters.py:
 * Init wraps each module's __init__ and partitions its parameters as soon as they are made;
 * transformers' from_pretrained enters it when is_deepspeed_zero3_enabled()) a rank holds at
 * most the largest layer whole. DeepSpeed's estimator counts 4 B per parameter (fp32, as it
 * builds); the ZeRO paper's accounting the weights' own bytes. Single-GPU runs without ZeRO
 * load once, not counted (0). Buffer factor: the caller's.
 */
static void host_at_load(const struct vf__train_states_in *in, uint64_t w, uint32_t per_node,
                         struct vf__train_states *out)
{
    bool ds = in->accounting == VF_ACCT_DEEPSPEED;
    bool init = in->stage >= 3 && in->zero_init;
    out->host_load = 0;
    if (ds) /* estimate_zero2/3_model_states_mem_needs: total or largest layer x 4 B */
        out->host_load = vf__sat_mul(init ? in->unit_bytes / 2 : in->params, 4ULL * per_node);
    else if (in->stage > 0) /* every weight at its storage, or the largest unit */
        out->host_load = vf__sat_mul(init ? in->unit_bytes : w, per_node);
}

void vf__train_states(const struct vf__train_states_in *in, struct vf__train_states *out)
{
    uint64_t t = in->trained;
    uint64_t w = vf__sat_add(vf__sat_mul(t, in->w_bytes), in->frozen_bytes);
    uint64_t g = vf__sat_mul(t, in->g_bytes);
    uint64_t mst = vf__sat_mul(t, in->master_bytes);
    bool ds = in->accounting == VF_ACCT_DEEPSPEED;
    bool gather = in->stage >= 3 && (in->group > 1 || in->offload == VF_OFFLOAD_PARAMS);
    uint64_t unit_w = gather ? in->unit_bytes : 0;
    uint64_t unit_g = gather && in->unit_grads ? in->unit_bytes : 0;
    uint32_t per_node = in->n_gpus < TRAIN_GPUS_PER_NODE ? in->n_gpus : TRAIN_GPUS_PER_NODE;
    if (!per_node)
        per_node = 1;
    uint32_t n = in->n_gpus ? in->n_gpus : 1;
    memset(out, 0, sizeof *out);

    if (in->offload == VF_OFFLOAD_NONE) {
        /* F-TRAIN-03: ZeRO-1 shards the optimizer and master copy, ZeRO-2 the gradients,
         * ZeRO-3 the weights, which it gathers one unit at a time */
        out->weights = vf__sat_add(shard_by(w, in, 3), unit_w);
        out->grads = vf__sat_add(shard_by(g, in, 2), unit_g);
        out->master = shard_by(mst, in, 1);
        out->opt = shard_by(in->opt_bytes, in, 1);
        /* F-TRAIN-12: DeepSpeed's ZeRO-2 keeps the 16-bit gradients whole besides the fp32
         * partition (its estimator: 4P + 16P/N) */
        if (ds && in->stage == 2 && in->master_bytes)
            out->grads = vf__sat_add(out->grads, vf__sat_mul(t, 2));
    } else {
        /* F-TRAIN-13: ZeRO-Offload: the fp32 master copy, fp32 gradients and the optimizer
         * step live in host memory; with params, the 16-bit weights too (ZeRO-3 only). One
         * node holds the shares of its own ranks. */
        out->host_master = scale(mst, per_node, n);
        out->host_grads = scale(vf__sat_mul(t, 4), per_node, n);
        out->host_opt = scale(in->opt_bytes, per_node, n);
        if (in->offload == VF_OFFLOAD_PARAMS) {
            out->host_weights = scale(w, per_node, n);
            out->weights = unit_w;
        } else {
            out->weights = vf__sat_add(shard_by(w, in, 3), unit_w);
        }
        out->grads = unit_g;
        uint64_t sum = vf__sat_add(vf__sat_add(out->host_master, out->host_grads),
                                   vf__sat_add(out->host_opt, out->host_weights));
        out->host_step = sum;
        if (ds) {
            /* F-TRAIN-12: DeepSpeed's estimator: ZeRO-2 counts the whole states on the node,
             * ZeRO-3 its share */
            uint64_t whole = vf__sat_add(vf__sat_add(mst, vf__sat_mul(t, 4)), in->opt_bytes);
            if (in->offload == VF_OFFLOAD_PARAMS)
                whole = vf__sat_add(whole, w);
            out->host_step = in->stage >= 3 ? sum : whole;
        }
    }
    host_at_load(in, w, per_node, out);
    out->host = out->host_load > out->host_step ? out->host_load : out->host_step;
    if (ds && out->host != VF_UNKNOWN) { /* F-TRAIN-12: additional_buffer_factor 1.5 */
        out->host = vf__sat_mul(out->host, DS_HOST_FACTOR_X2) / 2;
        out->host_load = vf__sat_mul(out->host_load, DS_HOST_FACTOR_X2) / 2;
        out->host_step = vf__sat_mul(out->host_step, DS_HOST_FACTOR_X2) / 2;
    }
}

/* The effective ZeRO stage of the knobs (F-TRAIN-03): --zero, or the FSDP strategy, or
 * stage 3 on several GPUs (FSDP full shard, the default of accelerate's FSDP plugin) and
 * with offload (params: 3, optimizer: 2). */
enum vf_err vf__train_stage(const struct vf_train_opts *t, uint32_t n, unsigned *zero,
                            uint32_t *group, struct vf_error *err)
{
    if (t->zero != VF_ZERO_AUTO && t->fsdp != VF_FSDP_NONE)
        return vf__errf(err, VF_EINVAL,
                        "--zero %d and --fsdp %s both set the sharding: give one of them",
                        (int)t->zero - 1, vf_fsdp_name(t->fsdp));
    *group = n;
    switch (t->fsdp) {
    case VF_FSDP_FULL_SHARD:
        *zero = 3;
        break;
    case VF_FSDP_SHARD_GRAD_OP:
        *zero = 2;
        break;
    case VF_FSDP_HYBRID_SHARD:
        *zero = 3;
        *group = n < TRAIN_GPUS_PER_NODE ? n : TRAIN_GPUS_PER_NODE;
        break;
    case VF_FSDP_NO_SHARD:
        *zero = 0;
        break;
    default:
        if (t->zero != VF_ZERO_AUTO)
            *zero = (unsigned)(t->zero - VF_ZERO_0);
        else if (t->offload == VF_OFFLOAD_PARAMS || (n > 1 && t->offload == VF_OFFLOAD_NONE))
            *zero = 3;
        else if (t->offload == VF_OFFLOAD_OPTIMIZER)
            *zero = n > 1 ? 3 : 2;
        else
            *zero = 0;
        break;
    }
    bool given =
        t->zero != VF_ZERO_AUTO || (t->fsdp != VF_FSDP_NONE && t->fsdp != VF_FSDP_NO_SHARD);
    if (given && *zero > 0 && n <= 1 && t->offload == VF_OFFLOAD_NONE)
        return vf__errf(err, VF_EINVAL,
                        "ZeRO-%u shards the model states over several GPUs; on one GPU it "
                        "saves nothing: add --gpus N, or --offload optimizer|params",
                        *zero);
    if (t->offload == VF_OFFLOAD_PARAMS && *zero < 3)
        return vf__errf(err, VF_EINVAL,
                        "--offload params needs ZeRO-3 (--zero 3 or --fsdp full_shard): "
                        "only stage 3 partitions the weights; ZeRO-%u keeps them on the GPU",
                        *zero);
    if (t->offload != VF_OFFLOAD_NONE && *zero == 0)
        return vf__errf(err, VF_EINVAL,
                        "--offload %s needs ZeRO-1 or higher (DeepSpeed ZeRO-Offload); "
                        "ZeRO-0 / FSDP no_shard keeps every state on the GPU",
                        vf_offload_name(t->offload));
    return VF_OK;
}
