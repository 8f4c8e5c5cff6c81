/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_gguf.c - libFuzzer target of the GGUF reader: any bytes through vf_reader_mem,
 * vf_gguf_read and vf_model_from_gguf (and the KV-cache math on the model it yields), under a
 * small arena so that an allocation driven by a claimed size shows up as a failure to read,
 * never as memory growth. Seeds: tests/fuzz/corpus/gguf/ (written by tests/helpers/mkgguf.c).
 */
#include "read/read_gguf.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vf_arena *a = vf_arena_open((size_t)8 << 20);
    struct vf_reader r;
    struct vf_gguf g;
    struct vf_model m;
    struct vf_error err;
    uint64_t v;

    if (!a)
        return 0;
    vf_reader_mem(&r, data, size, "fuzz.gguf");
    if (vf_gguf_read(a, &r, &g, &err) == VF_OK) {
        (void)vf_gguf_get_u64(&g, "llama.block_count", 0, &v);
        (void)vf_gguf_get_array_len(&g, "tokenizer.ggml.tokens", &v);
        if (vf_model_from_gguf(a, &g, "fuzz.gguf", &m, &err) == VF_OK) {
            (void)vf_model_kv_bytes_per_token(&m, VF_DT_F16);
            (void)vf_model_kv_bytes(&m, VF_DT_Q8_0, 4096, true);
            (void)vf_model_weight_bytes(&m, NULL);
        }
    }
    vf_arena_close(a);
    return 0;
}
