/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_gguf.h - what the GGUF reader shares with the model layer, its tests and its fuzzer,
 * beyond the public header: the input limits (every one of them a named constant), the
 * parsed metadata pairs that model/model_gguf.c turns into a struct vf_model, the tensor
 * name classifier, the ggml type table and the reader of split models
 * (X-00001-of-00003.gguf).
 */
#ifndef VRAMFIT_READ_GGUF_H
#define VRAMFIT_READ_GGUF_H

#include "internal.h"

/* ------------------------------------------------------------ input limits */

#define VF_GGUF_MAX_KV             65536u              /* metadata pairs in one file */
#define VF_GGUF_MAX_TENSORS        (1u << 18)          /* tensor infos in one file */
#define VF_GGUF_MAX_KEY            4096u               /* bytes of one metadata key */
#define VF_GGUF_MAX_STRING         ((uint64_t)1 << 20) /* a string value kept (longer: skipped) */
#define VF_GGUF_MAX_NAME           64u   /* tensor name bytes, exclusive (ggml GGML_MAX_NAME) */
#define VF_GGUF_MAX_DIMS           4u    /* dimensions of a tensor (ggml GGML_MAX_DIMS) */
#define VF_GGUF_MAX_ARRAY_KEPT     8192u /* numeric array elements kept (longer: length only) */
#define VF_GGUF_MAX_STR_ARRAY_KEPT 64u   /* string array elements kept (longer: length only) */
#define VF_GGUF_MAX_ARRAY_LEN      ((uint64_t)1 << 32)   /* elements one array may claim */
#define VF_GGUF_MAX_DEPTH          8u                    /* nesting of arrays of arrays */
#define VF_GGUF_MAX_HEADER_BYTES   ((uint64_t)512 << 20) /* metadata + tensor infos */
#define VF_GGUF_MAX_TENSOR_ELEMS   ((uint64_t)1 << 48)   /* elements of one tensor */
#define VF_GGUF_MAX_ALIGNMENT      ((uint64_t)1 << 20)   /* general.alignment */
#define VF_GGUF_MAX_SPLITS         1024u                 /* parts of a split model */

/* ------------------------------------------------------------ metadata pairs */

/* GGUF metadata value types (gguf.h enum gguf_type). */
enum vf_gguf_type {
    VF_GGUF_U8 = 0,
    VF_GGUF_I8,
    VF_GGUF_U16,
    VF_GGUF_I16,
    VF_GGUF_U32,
    VF_GGUF_I32,
    VF_GGUF_F32,
    VF_GGUF_BOOL,
    VF_GGUF_STRING,
    VF_GGUF_ARRAY,
    VF_GGUF_U64,
    VF_GGUF_I64,
    VF_GGUF_F64,
    VF_GGUF_TYPE_COUNT
};

/* One kept numeric value: integers widened to 64 bits, floats to double. */
union vf_gguf_num {
    uint64_t u;
    int64_t i;
    double f;
};

/* One metadata pair (struct vf_gguf's kv[n_kv]). Arrays over the VF_GGUF_MAX_*_KEPT limits
 * and strings over VF_GGUF_MAX_STRING keep only their length (kept == false). */
struct vf_gguf_kv {
    const char *key;
    uint32_t type;          /* enum vf_gguf_type */
    uint32_t elem_type;     /* arrays: the element type */
    uint64_t n;             /* arrays: elements; strings: bytes */
    bool kept;              /* the value (or the array's elements) is held below */
    union vf_gguf_num v;    /* scalars */
    const char *s;          /* strings */
    union vf_gguf_num *arr; /* numeric arrays */
    const char **strs;      /* string arrays */
    uint64_t offset;        /* byte offset of the pair in the file */
};

/* The pair named key in g, NULL when absent (or g or key is NULL). */
const struct vf_gguf_kv *vf__gguf_find(const struct vf_gguf *g, const char *key);
/* A non-negative integer (or bool) value v of type t into *out; false for a negative
 * integer, a float, a string or an array. */
bool vf__gguf_as_u64(uint32_t t, union vf_gguf_num v, uint64_t *out);

/* ------------------------------------------------------------ tensor names */

/*
 * The layer (blk.N., else -1) and class of a tensor from its GGUF name (llama-arch.cpp
 * LLM_TENSOR_NAMES). *expert_each is set for the per-expert tensors of old MoE files
 * (blk.N.ffn_gate.E.weight), which count one expert each.
 */
void vf__gguf_classify(const char *name, int32_t *layer, enum vf_tclass *cls, bool *expert_each);

/* ------------------------------------------------------------ ggml types */

/*
 * ggml's type table (ggml.c type_traits, ggml-common.h block structs): the name, elements per
 * block and bytes per block of type id t. Returns false for ids that are unknown or that ggml
 * removed from GGUF files (Q4_2, Q4_3, the Q4_0_x_y and IQ4_NL_x_y repacks); *name is still
 * set (or NULL when the id never existed).
 */
bool vf__ggml_type(int t, const char **name, uint32_t *blck, uint32_t *bytes);
/* The VF_DT_* equivalent of ggml type t, VF_DT_DEFAULT when there is none (I8, F64, ...). */
enum vf_dtype vf__ggml_type_dtype(int t);
/* One past the largest ggml type id the table knows. */
int vf__ggml_type_count(void);

/* llama.cpp's file type name ("Q4_K_M", "F16", "MXFP4_MOE") for general.file_type ft (the
 * "guessed" bit 1024 ignored); NULL when unknown. */
const char *vf__gguf_ftype_name(int ft);

/*
 * Reads a model that may be split: for a path named PREFIX-0000K-of-0000N.gguf every part
 * 1..N is read (headers only) and their tensors merged in part order; the metadata are the
 * first part's. Any other path is read as one file, which must not claim split.count > 1.
 * Errors name the part. Everything lives in arena a.
 */
enum vf_err vf__gguf_read_split(struct vf_arena *a, const char *path, struct vf_gguf *out,
                                struct vf_error *err);
/* The same with the parts read by read_part (the hub reads them with range requests). */
enum vf_err vf__gguf_read_split_with(struct vf_arena *a, const char *path,
                                     enum vf_err (*read_part)(void *ud, struct vf_arena *a,
                                                              const char *name, struct vf_gguf *g,
                                                              struct vf_error *err),
                                     void *ud, struct vf_gguf *out, struct vf_error *err);

#endif /* VRAMFIT_READ_GGUF_H */
