/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_config.c - libFuzzer target: the HF config.json reader (model_config.c) and the model
 * math that runs on what it builds (parameters, weight bytes, KV bytes).
 */
#include "internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    struct vf_model m;
    struct vf_error err;
    if (a && !vf_model_from_config(a, (const char *)data, size, "fuzz.json", &m, &err)) {
        struct vf_quant q;
        (void)vf_model_weight_bytes(&m, &m.native);
        if (!vf_quant_parse("Q4_K_M", &q, NULL))
            (void)vf_model_weight_bytes(&m, &q);
        (void)vf_model_kv_bytes_per_token(&m, VF_DT_Q8_0);
        (void)vf_model_kv_bytes(&m, VF_DT_DEFAULT, 4096, true);
    }
    vf_arena_close(a);
    return 0;
}
