/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_safetensors.c - libFuzzer target: the safetensors header reader (read_safetensors.c)
 * over a memory reader, once with the size known and once with it hidden (as a streamed
 * download), then the merge of what it read into a model built from the catalog's
 * llama-3.2-1b config (hostile names, layers and sizes against real tensor groups).
 */
#include "read/read_safetensors.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The reader of vf_reader_mem behind one that does not tell its size. */
static enum vf_err unsized_read(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                                struct vf_error *err)
{
    struct vf_reader *inner = ud;
    return inner->read(inner->ud, off, buf, n, got, err);
}

/* The base model, parsed once; every run merges into a copy of its groups. */
static const struct vf_model *base_model(void)
{
    static struct vf_model m;
    static struct vf_arena *a;
    if (!a) {
        struct vf_catalog *c = NULL;
        size_t len;
        a = vf_arena_open(0);
        if (vf_catalog_open(&c, NULL, NULL))
            return NULL;
        const struct vf_catalog_model *cm = vf_catalog_model(c, "llama-3.2-1b");
        const char *text = cm ? vf_catalog_file(a, c, cm->file, &len, NULL) : NULL;
        if (!text || vf_model_from_config(a, text, len, cm->file, &m, NULL))
            m.groups = NULL;
        vf_catalog_close(c);
    }
    return m.groups ? &m : NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    struct vf_reader inner, r;
    struct vf_safetensors st;
    struct vf_error err;

    if (!a)
        return 0;
    vf_reader_mem(&inner, data, size, "fuzz.safetensors");
    if (!vf_safetensors_read(a, &inner, &st, &err)) {
        (void)vf__safetensors_dtype_params(&st, "I32");
        const struct vf_model *b = base_model();
        struct vf_model m;
        if (b) {
            m = *b;
            m.groups = vf_arena_alloc(a, b->n_groups * sizeof *m.groups);
            if (m.groups) {
                memcpy(m.groups, b->groups, b->n_groups * sizeof *m.groups);
                struct vf_quant native = {0};
                if (!vf__model_apply_tensors(&m, st.tensors, st.n_tensors, &err))
                    (void)vf_model_weight_bytes(&m, &native);
            }
        }
    }
    r = inner;
    r.read = unsized_read;
    r.ud = &inner;
    r.size = VF_UNKNOWN;
    (void)vf_safetensors_read(a, &r, &st, &err);
    vf_arena_close(a);
    return 0;
}
