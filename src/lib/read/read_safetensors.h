/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_safetensors.h - what read_safetensors.c shares with the rest of libvramfit (the
 * model resolver, the hub client) and with its tests: the format's limits, the sharded
 * folder reader, the tensor-name classifier and the merge of exact tensor sizes into a
 * model read from config.json. Symbols are `vf__` (library-global, not public).
 */
#ifndef VRAMFIT_READ_SAFETENSORS_H
#define VRAMFIT_READ_SAFETENSORS_H

#include "internal.h"

/* ------------------------------------------------------------ input limits */

/* The header cap of the reference implementation (safetensors/src/tensor.rs,
 * MAX_HEADER_SIZE = 100_000_000): a longer header is refused there, so no real file has one. */
#define VF_ST_MAX_HEADER_BYTES ((uint64_t)100000000)
/* Tensors in one header (DeepSeek-V3's largest shard holds ~1,700; a whole model ~92,000). */
#define VF_ST_MAX_TENSORS ((size_t)1 << 20)
/* Dimensions of one tensor (struct vf_tensor_info holds 8). */
#define VF_ST_MAX_DIMS 8
/* model.safetensors.index.json (DeepSeek-V3's is ~9 MB). */
#define VF_ST_MAX_INDEX_BYTES ((size_t)64 << 20)
/* Distinct shard files one index may name. */
#define VF_ST_MAX_SHARDS ((size_t)8192)
/* The index file of a sharded checkpoint, inside its folder. */
#define VF_ST_INDEX_NAME "model.safetensors.index.json"

/* Bits per element of a safetensors dtype ("BF16" -> 16, "F4" -> 4); 0 when unknown. */
unsigned vf__st_dtype_bits(const char *dtype);

/*
 * The layer and class of a tensor from its Hugging Face name (F-W-13): the layer from the
 * first "layers.N." / "layer.N." / "h.N." / "blocks.N." component pair (-1 when none), the
 * class from the module names (q_proj -> ATTN_Q, experts.N.gate_proj -> FFN_GATE_EXP, ...).
 * Tensors of vision/audio towers and projectors are OTHER outside the layers; tensors of a
 * multi-token-prediction block ("mtp.") are OTHER outside the layers too.
 */
void vf__st_classify(const char *name, int32_t *layer, enum vf_tclass *cls);

/*
 * Is the tensor a model parameter (F-W-12)? Quantization metadata is not: scales
 * (scales, *_scales, weight_scale, weight_scale_inv, weight_scale_2, input_scale), zero points
 * (qzeros, weight_zero_point) and GPTQ's g_idx. Its bytes still count as weights.
 */
bool vf__st_is_param(const char *name);

/* Logical elements of the parameter tensors of st stored as dtype ("BF16", "I32", ...). */
uint64_t vf__safetensors_dtype_params(const struct vf_safetensors *st, const char *dtype);

/* What a sharded folder's index said, beside the merged headers. */
struct vf__st_index {
    uint64_t total_size; /* metadata.total_size, VF_UNKNOWN when absent */
    size_t n_shards;     /* distinct shard files read */
    size_t n_mapped;     /* weight_map entries, all found in their shards */
};

/*
 * Reads DIR/model.safetensors.index.json and the header of every distinct shard it names
 * (files in DIR; a shard name with a '/' or a leading '.' is refused), merges their tensors
 * into *out (shard order, then file order; each tensor's offset is in its own shard file),
 * and checks that every weight_map entry is a tensor of the shard it names and that no
 * tensor is in two shards. out->header_len is the sum of the shards' header lengths,
 * out->metadata_format the first shard's. metadata.total_size is read (a number >= 0, or
 * absent) into info->total_size but not required to equal out->weight_bytes: the headers
 * are authoritative, and published indexes (converted checkpoints) do not always agree.
 * info may be NULL. Everything is allocated in a. Errors name the file and the tensor:
 * VF_ENOENT (no index, missing shard), VF_EFORMAT, VF_ELIMIT, VF_ENOMEM, VF_EIO.
 */
enum vf_err vf__safetensors_read_index_ex(struct vf_arena *a, const char *dir,
                                          struct vf_safetensors *out, struct vf__st_index *info,
                                          struct vf_error *err);
/* vf__safetensors_read_index_ex without the index summary. */
enum vf_err vf__safetensors_read_index(struct vf_arena *a, const char *dir,
                                       struct vf_safetensors *out, struct vf_error *err);

/*
 * Merges exact evidence (F-W-14): the tensors t[0..n) of a model's files into m, a model read
 * from its config.json (architecture from the config, bytes from the headers). Each tensor's
 * bytes go to the group of m->groups with its class and layer (stored_bytes; the group with
 * the tensor's row length when several share class and layer); a fused qkv_proj or
 * gate_up_proj whose layer has separate groups is spread over them in proportion to their
 * parameters. A group left with no tensor while another group of its class and layer got
 * some is folded into that one (parameters kept). Tensors with no group are counted apart:
 * those an engine loads (vision/audio towers and projectors, any other unmatched tensor)
 * are in m->exact_weight_bytes, those it skips are not: multi-token-prediction layers
 * (layer >= n_layers, "mtp."; loaded only for speculative decoding), lm_head when the
 * embeddings are tied, rotary inv_freq buffers. Sets m->exact_weight_bytes to the loaded
 * bytes, m->tensors/n_tensors to t (which must outlive m) and m->provenance to EXACT.
 * Groups of m are modified in place; nothing is allocated. Errors: VF_EINVAL (no groups),
 * VF_ERANGE (byte sums overflow).
 */
enum vf_err vf__model_apply_tensors(struct vf_model *m, const struct vf_tensor_info *t, size_t n,
                                    struct vf_error *err);

#endif /* VRAMFIT_READ_SAFETENSORS_H */
