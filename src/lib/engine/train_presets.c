/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_presets.c - what each training stack turns on by default (issue 22, DESIGN section 8
 * --framework NAME[@VERSION]; F-TRAIN-22 in docs/FORMULAS.md): gradient checkpointing and its
 * kind, the loss (plain, chunked or fused cross-entropy), fused kernels, torch.compile, the
 * precision, the optimizer, PEFT's prepare_model_for_kbit_training on QLoRA and the bytes the
 * plain loss holds per token x vocab for the transformers release the stack runs on. A knob the
 * user gives (vf_train_opts.given) always wins. Each default cites the file and setting it
 * comes from; where a default changed between releases the table has a row per regime, newest
 * first, and NAME@VERSION picks the newest row at or below VERSION.
 */
#include "est_train.h"

#include <stdlib.h>
#include <string.h>

/* F-TRAIN-08/22: bytes per token x vocab the plain cross-entropy holds at its peak, the larger
 * of its two phases (the Trainer's compute_loss drops the model's outputs before backward, so
 * the logits it returns are not live at backward). Backward, every release: the fp32
 * log_softmax output nll_loss saved (4), its incoming gradient (4) and the gradient it
 * produces (4) = 12. Forward, at log_softmax: transformers >= 4.46 (loss/loss_utils.py
 * ForCausalLMLoss: logits = logits.float(); shift_logits = logits[..., :-1, :].contiguous())
 * keeps the 16-bit logits LlamaForCausalLM.forward holds (2) beside the fp32 upcast (4), its
 * shifted contiguous copy (4) and the log_softmax output (4) = 14, the peak; before (4.45
 * LlamaForCausalLM.forward: logits = logits.float() replaces the 16-bit logits, then
 * shift_logits.contiguous()) 4 + 4 + 4 = 12, the same as backward. torchtitan's loss
 * (components/loss.py cross_entropy_loss on pred.flatten(0, 1).float(), labels already
 * shifted, `del pred` before backward) holds 2 + 4 + 4 forward: backward's 12. */
#define LOGITS_TF446 14
#define LOGITS_TF445 12
#define LOGITS_TITAN 12
/* F-TRAIN-06/22: TRL truncates each sample to 1024 tokens unless told, in every release
 * with SFTConfig (read in huggingface/trl's history, trl/trainer/sft_config.py and
 * sft_trainer.py): 0.16 to 1.9 SFTConfig.max_length = field(default=1024) (renamed from
 * max_seq_length in PR #2895, commit be1e340); 0.15 SFTConfig.max_seq_length default 1024
 * (PR #2405, 5b9236d); 0.9.3 to 0.14 SFTConfig.max_seq_length = None, which
 * SFTTrainer.__init__ replaced by min(tokenizer.model_max_length, 1024) - 1024 for every
 * tokenizer of a model in the catalog. So no preset row needs another value. The other
 * stacks take the data's length: F-TRAIN-06's 2048. */
#define TRL_MAX_LENGTH 1024
/* Unsloth's cross-entropy kernel before its fused loss: the 16-bit logits, the gradient
 * written over them (2). */
#define LOGITS_INPLACE 2

static const struct vf__train_preset presets[] = {
    /* transformers Trainer: training_args.py TrainingArguments gradient_checkpointing=False,
     * optim="adamw_torch", use_liger_kernel=False, torch_compile=False (bf16=False: fp32
     * unless --bf16, which every example passes; the preset takes bf16 mixed). QLoRA as
     * PEFT's recipe: peft/utils/other.py prepare_model_for_kbit_training(model,
     * use_gradient_checkpointing=True). */
    {VF_FW_HF, "hf", "4.46", "transformers Trainer 4.46+ (training_args.py defaults)", VF_GC_NONE,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, true, LOGITS_TF446, 0, 0},
    {VF_FW_HF, "hf", "4.0", "transformers Trainer < 4.46 (fp32 logits in the model's forward)",
     VF_GC_NONE, VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, true, LOGITS_TF445, 0, 0},
    /* TRL SFTTrainer: trl/trainer/sft_config.py SFTConfig overrides gradient_checkpointing=True
     * and bf16=True; loss_type defaults to "chunked_nll" (lm_head and cross-entropy by chunks
     * of tokens); sft_trainer.py prepares a k-bit model with prepare_model_for_kbit_training. */
    {VF_FW_TRL, "trl", "1.0", "TRL SFTTrainer 1.x (sft_config.py SFTConfig)", VF_GC_FULL,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, true, false, false, true, LOGITS_TF446, 0, TRL_MAX_LENGTH},
    {VF_FW_TRL, "trl", "0.20", "TRL SFTTrainer 0.20-0.29 (SFTConfig: checkpointing, bf16)",
     VF_GC_FULL, VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, true, LOGITS_TF446, 0,
     TRL_MAX_LENGTH},
    {VF_FW_TRL, "trl", "0.0", "TRL SFTTrainer < 0.20 (TrainingArguments' defaults)", VF_GC_NONE,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, true, LOGITS_TF445, 0, TRL_MAX_LENGTH},
    /* Unsloth: unsloth/models/llama.py FastLlamaModel.get_peft_model
     * use_gradient_checkpointing="unsloth" (the saved layer inputs offloaded to host RAM);
     * unsloth/kernels fast RMSNorm, SwiGLU and the fused cross-entropy (no whole logits); the
     * 4-bit base keeps embeddings and lm_head 16-bit (no fp32 upcast). */
    {VF_FW_UNSLOTH, "unsloth", "2024.12",
     "Unsloth 2024.12+ (get_peft_model use_gradient_checkpointing=unsloth, chunked fused loss)",
     VF_GC_OFFLOAD, VF_PREC_BF16, VF_OPT_ADAMW, 0, true, true, false, false, LOGITS_TF446, 0, 0},
    /* before: kernels/cross_entropy_loss.py Fast_CrossEntropyLoss on the whole 16-bit logits,
     * its gradient written in place (LOGITS_INPLACE) */
    {VF_FW_UNSLOTH, "unsloth", "2024.1",
     "Unsloth < 2024.12 (offloaded checkpoints, in-place loss on the 16-bit logits)", VF_GC_OFFLOAD,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, false, true, false, false, LOGITS_INPLACE, 0, 0},
    /* torchtune: recipes/configs/llama3_1/8B_*.yaml enable_activation_checkpointing: True,
     * dtype: bf16 (no fp32 anywhere), compile: False; 8B_full_single_device.yaml bitsandbytes
     * PagedAdamW8bit with optimizer_in_bwd: True (full fine-tuning only; LoRA configs use
     * torch AdamW). The loss: modules/loss LinearCrossEntropyLoss (lm_head and loss by 8
     * chunks of tokens, no whole logits) from 0.6; uncompiled, autograd keeps each chunk's
     * fp32 log-probabilities (4 B per token x vocab); before, CEWithChunkedOutputLoss over the
     * whole 16-bit logits in 8 chunks. */
    {VF_FW_TORCHTUNE, "torchtune", "0.6", "torchtune 0.6+ (recipes/configs/llama3_1)", VF_GC_FULL,
     VF_PREC_PURE_BF16, VF_OPT_ADAMW, 0, true, false, false, false, LOGITS_TF446, 4, 0},
    {VF_FW_TORCHTUNE, "torchtune", "0.3", "torchtune 0.3-0.5 (CEWithChunkedOutputLoss)", VF_GC_FULL,
     VF_PREC_PURE_BF16, VF_OPT_ADAMW, 8, false, false, false, false, LOGITS_TF446, 0, 0},
    /* axolotl: examples/llama-3/{lora,qlora}.yml gradient_checkpointing: true, bf16: auto,
     * optimizer adamw_bnb_8bit (qlora: paged_adamw_32bit in older examples); loaders/model.py
     * calls prepare_model_for_kbit_training for a 4-bit adapter run. */
    {VF_FW_AXOLOTL, "axolotl", "0.5", "axolotl 0.5+ (examples/llama-3 configs)", VF_GC_FULL,
     VF_PREC_BF16, VF_OPT_ADAMW8BIT, 0, false, false, false, true, LOGITS_TF446, 0, 0},
    /* LLaMA-Factory: hparams/model_args.py disable_gradient_checkpointing=False (so on),
     * upcast_layernorm=False, upcast_lmhead_output=False (no fp32 cast of the frozen base);
     * bf16: true in its examples; optim adamw_torch. */
    {VF_FW_LLAMA_FACTORY, "llama-factory", "0.9.1",
     "LLaMA-Factory 0.9.1+ (model_args.py; transformers 4.46+)", VF_GC_FULL, VF_PREC_BF16,
     VF_OPT_ADAMW, 0, false, false, false, false, LOGITS_TF446, 0, 0},
    /* before 0.9.1 its requirements.txt capped transformers below 4.46 (the fp32 logits in
     * the model's forward) */
    {VF_FW_LLAMA_FACTORY, "llama-factory", "0.5", "LLaMA-Factory 0.5-0.9.0 (transformers < 4.46)",
     VF_GC_FULL, VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, false, LOGITS_TF445, 0, 0},
    /* torchtitan: models/llama3/train_configs/llama3_8b.toml [activation_checkpoint]
     * mode = "selective" (op policy), compile = false; FSDP2 MixedPrecisionPolicy
     * param_dtype bf16, reduce_dtype fp32 (fp32 sharded parameters); plain cross-entropy on
     * the bf16 logits upcast to fp32. */
    {VF_FW_TORCHTITAN, "torchtitan", "0.1", "torchtitan (llama3_8b.toml)", VF_GC_SELECTIVE,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, false, LOGITS_TITAN, 0, 0},
    /* DeepSpeed under the transformers Trainer (integrations/deepspeed.py): the Trainer's
     * defaults; ZeRO as configured. */
    {VF_FW_DEEPSPEED, "deepspeed", "0.14", "DeepSpeed via transformers Trainer", VF_GC_NONE,
     VF_PREC_BF16, VF_OPT_ADAMW, 0, false, false, false, true, LOGITS_TF446, 0, 0},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

/* Compares dotted versions "1.2.3" numerically (up to 4 parts; anything after a part's
 * digits up to the next dot ignored): <0, 0, >0. */
static int version_cmp(const char *a, const char *b)
{
    for (int i = 0; i < 4 && (*a || *b); i++) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        const char *da = strchr(ea, '.'), *db = strchr(eb, '.');
        a = da ? da + 1 : ea + strlen(ea);
        b = db ? db + 1 : eb + strlen(eb);
    }
    return 0;
}

const struct vf__train_preset *vf__train_preset(enum vf_framework fw, const char *version)
{
    if (fw == VF_FW_DEFAULT)
        fw = VF_FW_TRL; /* the most common stack: TRL's SFTTrainer, newest */
    const struct vf__train_preset *last = NULL;
    for (size_t i = 0; i < N_PRESETS; i++) {
        if (presets[i].fw != fw)
            continue;
        last = &presets[i];
        if (!version || version_cmp(version, presets[i].version) >= 0)
            return last;
    }
    return last; /* older than every row: the oldest regime */
}
