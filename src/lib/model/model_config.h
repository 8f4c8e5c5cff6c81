/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_config.h - what the config.json reader (model_config.c) shares with the other
 * readers of model/: the architectures whose attention layers alternate sliding-window and
 * full attention with a fixed period (F-LAY-01), one table that config.json files and GGUF
 * files (model_gguf.c) both use.
 */
#ifndef VRAMFIT_MODEL_CONFIG_H
#define VRAMFIT_MODEL_CONFIG_H

#include "internal.h"

/*
 * F-LAY-01: the period with which the attention layers of HF model_type mt alternate (the
 * last layer of each period is full, the others slide): gemma2 and gpt_oss 2, cohere2 and
 * llama4 4, gemma3 6 (llama.cpp set_swa_pattern, the HF configs' defaults). 0 when mt does
 * not alternate: then every attention layer of a model with a window slides. A file's own
 * sliding_window_pattern overrides the period.
 */
uint32_t vf__swa_period(const char *model_type);

/* Issue 21: whether model_type (HF's, or a GGUF architecture with '-' read as '_') names an
 * encoder-only family (BERT and its descendants): they hold no KV cache and generate no text. */
bool vf__encoder_only(const char *model_type);
/* F-LAY-01: does layer i slide under period p (i % p < p - 1; every layer when p is 0)? */
bool vf__swa_sliding(uint32_t i, uint32_t period);

#endif /* VRAMFIT_MODEL_CONFIG_H */
