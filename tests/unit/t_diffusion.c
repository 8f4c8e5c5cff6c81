/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_diffusion.c - the pipeline reader (data/pipelines/NAME.json) and the ComfyUI engine
 * (F-DIF-01..09, docs/FORMULAS.md): the guide's Flux and T5-XXL sizes, token
 * counts, phases and peak, tiled VAE decode, one-GPU splitting and hostile pipeline
 * files. Every expected number is derived in a comment with its formula ID.
 */
#include "th.h"

#include <math.h>
#include <string.h>

#include "engine/pipeline_terms.h"
#include "internal.h"

#define MIB (1ULL << 20)

/* The first component called name in the given phase (NULL: any phase). */
static uint64_t component_in(const struct vf_estimate *e, const char *name, const char *phase)
{
    for (size_t i = 0; i < e->n_components; i++)
        if (!strcmp(e->components[i].name, name) &&
            (!phase || (e->components[i].phase && !strcmp(e->components[i].phase, phase))))
            return e->components[i].bytes;
    fail_msg("no component %s", name);
    return 0;
}

static void estimate(const struct vf_model *m, const struct vf_workload *w, struct vf_estimate *e)
{
    struct vf_error err = {0};
    if (vf_estimate(th_arena, m, w, e, &err))
        fail_msg("%s", err.msg);
}

static struct vf_workload image(void)
{
    struct vf_workload w = {.task = VF_TASK_IMAGE};
    return w;
}

/* An image under the diffusers engine, `batch` at once. */
static struct vf_workload diffusers_images(uint32_t batch)
{
    struct vf_workload w = image();
    w.engine = "diffusers";
    w.diffusion.batch = batch;
    return w;
}

static struct vf_workload weights(enum vf_task t, const char *q)
{
    struct vf_workload w = {.task = t};
    struct vf_error err = {0};
    if (vf_quant_parse(q, &w.weights, &err))
        fail_msg("%s", err.msg);
    return w;
}

/* The guide: "Flux.1 dev a 16 bit sono circa 24 GB solo di pesi; in FP8 circa 12 GB. Il
 * suo text encoder T5-XXL scende da circa 9,5 GB a circa 5 GB in FP8." */
static void flux_guide_sizes(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    assert_non_null(m.pipeline);
    assert_int_equal(m.task, VF_TASK_IMAGE);
    /* pipeline file: 19 x 339,831,296 + 38 x 141,591,808 + 64,124,992 = 11,901,408,320 */
    assert_u64(m.params, 11901408320ULL);
    assert_u64(m.params_active, 11901408320ULL);

    struct vf_workload w = image();
    struct vf_estimate e;
    estimate(&m, &w, &e);
    /* F-DIF-01: 11,901,408,320 x 2 B (bf16) = 23,802,816,640 B = 23.8 GB (the guide's ~24) */
    assert_u64(e.weights_bytes, 23802816640ULL);
    assert_u64(component_in(&e, "transformer", "denoise"), 23802816640ULL);
    /* F-DIF-02: t5xxl 4,762,310,656 x 2 = 9,524,621,312 (the guide's ~9.5 GB) + clip_l
     * 123,060,480 x 2 = 246,120,960: 9,770,742,272 */
    assert_u64(component_in(&e, "text_encoders", "encode"), 9770742272ULL);
    assert_u64(vf_dtype_bytes(VF_DT_F16, 4762310656ULL), 9524621312ULL);

    w = weights(VF_TASK_IMAGE, "fp8");
    estimate(&m, &w, &e);
    /* F-DIF-01: 11,901,408,320 x 1 B = 11.9 GB (the guide's ~12 GB) */
    assert_u64(e.weights_bytes, 11901408320ULL);
    /* F-DIF-02: t5xxl fp8 4,762,310,656 (the guide's ~5 GB) + clip_l fp16 246,120,960 */
    assert_u64(component_in(&e, "text_encoders", "encode"), 5008431616ULL);

    w = weights(VF_TASK_IMAGE, "Q8_0");
    estimate(&m, &w, &e);
    /* F-DIF-01: Q8_0 is 34 B per 32 weights: 11,901,408,320 / 32 x 34 = 12,645,246,340 */
    assert_u64(e.weights_bytes, 12645246340ULL);
}

/* The whole Flux dev estimate at its defaults: 1024x1024, batch 1, bf16. */
static void flux_phases(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    struct vf_estimate e;
    estimate(&m, &w, &e);
    assert_string_equal(e.engine, "comfyui");
    assert_int_equal(e.diffusion.width, 1024);
    assert_int_equal(e.diffusion.height, 1024);
    assert_int_equal(e.diffusion.frames, 1);
    assert_int_equal(e.diffusion.batch, 1);
    /* F-DIF-03: latent 128 x 128, patch 2: 64 x 64 = 4096 image tokens */
    assert_u64(e.diffusion_tokens, 4096);
    /* F-DIF-04: (4096 + 512 text) x 18 x 3072 x 2 B = 509,607,936; F-DIF-05: area 16384 x
     * 2 B x 0.01 x 3.1 MiB = 1,065,151,889 B; the larger (and > 0.8 GiB) wins */
    assert_u64(component_in(&e, "activations", "denoise"), 1065151889ULL);
    /* F-DIF-07: 2178 x 128 x 128 x 64 x 2 B = 4,567,597,056 */
    assert_u64(component_in(&e, "vae_decode", "decode"), 4567597056ULL);
    /* F-DIF-08: 400 MiB + 400 MiB */
    assert_u64(component_in(&e, "runtime_overhead", NULL), 800 * MIB);
    /* F-DIF-06: denoise 23,802,816,640 + 1,065,151,889 + 838,860,800 = 25,706,829,329;
     * encode 9,770,742,272 + 858,993,459 + 838,860,800 = 11,468,596,531; decode smaller */
    assert_u64(e.total_bytes, 25706829329ULL);
    assert_string_equal(e.peak_phase, "denoise");
    /* > the RTX 4090's 25,394,413,568 usable: 24 GB is too small at 16 bit (guide row) */
    assert_true(e.total_bytes > 25394413568ULL);
    assert_true(e.total_bytes <= 33677180928ULL); /* the RTX 5090's 32117 MiB */
    assert_true(e.n_assumptions >= 6);

    w = weights(VF_TASK_IMAGE, "fp8");
    estimate(&m, &w, &e);
    /* F-DIF-06: 11,901,408,320 + 1,065,151,889 + 838,860,800 = 13,805,421,009 */
    assert_u64(e.total_bytes, 13805421009ULL);
}

/* Video tokens and the Wan 2.2 A14B experts. */
static void wan_tokens_experts(void **state)
{
    (void)state;
    struct vf_model m = th_model("wan2.2-t2v-a14b");
    assert_int_equal(m.task, VF_TASK_VIDEO);
    /* two experts of 14,288,491,584 */
    assert_u64(m.params, 28576983168ULL);
    assert_u64(m.params_active, 14288491584ULL);
    struct vf_workload w = {
        .task = VF_TASK_VIDEO,
        .diffusion = {.width = 1280, .height = 720, .frames = 81},
    };
    struct vf_estimate e;
    estimate(&m, &w, &e);
    /* F-DIF-03: ((81 - 1) / 4 + 1) x (720 / 16) x (1280 / 16) = 21 x 45 x 80 = 75,600 */
    assert_u64(e.diffusion_tokens, 75600);
    /* F-DIF-01: one expert resident: 14,288,491,584 x 2 = 28,576,983,168; both 57,153,966,336 */
    assert_u64(component_in(&e, "transformer", "denoise"), 28576983168ULL);
    assert_u64(e.weights_bytes, 57153966336ULL);
    /* F-DIF-04: 75,600 x 10 x 5120 x 2 = 7,741,440,000; F-DIF-05: area 21 x 90 x 160 =
     * 302,400 x 2 x 0.01 x 2.304230 MiB = 14,612,937,352 (the larger) */
    assert_u64(component_in(&e, "activations", "denoise"), 14612937352ULL);
    /* F-DIF-07: 7000 x 90 x 160 x 64 x 2 = 12,902,400,000 (any frame count) */
    assert_u64(component_in(&e, "vae_decode", "decode"), 12902400000ULL);
    /* F-DIF-06: 28,576,983,168 + 14,612,937,352 + 838,860,800 = 44,028,781,320: above the
     * RTX 5090, within the L40S's 47,942,991,872 (the guide's "48 GB") */
    assert_u64(e.total_bytes, 44028781320ULL);
    assert_string_equal(e.peak_phase, "denoise");

    w.weights = weights(VF_TASK_VIDEO, "fp8").weights;
    estimate(&m, &w, &e);
    /* F-DIF-06: 14,288,491,584 + 14,612,937,352 + 838,860,800 = 29,740,289,736 <= the RTX
     * 5090's 33,677,180,928 (the guide's "32 GB for short clips") */
    assert_u64(e.total_bytes, 29740289736ULL);
    /* F-DIF-02: umt5_xxl at fp8 with fp8 weights: 5,680,910,336 */
    assert_u64(component_in(&e, "text_encoders", "encode"), 5680910336ULL);

    /* 50 frames: (50 - 1) / 4 + 1 = 13 latent frames, as ComfyUI's latent floors */
    w.diffusion.frames = 50;
    estimate(&m, &w, &e);
    assert_u64(e.diffusion_tokens, 13 * 45 * 80);
}

/* Wan 1.3B: the 16-bit UMT5 is larger than the denoiser, so encoding is the peak. */
static void wan_small_encode_peak(void **state)
{
    (void)state;
    struct vf_model m = th_model("wan2.1-t2v-1.3b");
    struct vf_workload w = {.task = VF_TASK_VIDEO};
    struct vf_estimate e;
    estimate(&m, &w, &e);
    /* defaults 832 x 480 x 81: F-DIF-03 21 x 30 x 52 = 32,760 */
    assert_u64(e.diffusion_tokens, 32760);
    /* F-DIF-06: encode 5,680,910,336 x 2 + 858,993,459 + 838,860,800 = 13,059,674,931 */
    assert_string_equal(e.peak_phase, "encode");
    assert_u64(e.total_bytes, 13059674931ULL);
}

/* VAE Decode (Tiled) caps the decode; ComfyUI's OOM fallback does the same on a small card. */
static void tiled_vae(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    w.diffusion.width = w.diffusion.height = 2048;
    struct vf_estimate e;
    estimate(&m, &w, &e);
    /* F-DIF-07: 2178 x 256 x 256 x 64 x 2 = 18,270,388,224 */
    uint64_t full = component_in(&e, "vae_decode", "decode");
    assert_u64(full, 18270388224ULL);
    w.diffusion.tiled_vae = true;
    estimate(&m, &w, &e);
    /* F-DIF-07: one 512 px tile: 2178 x 64 x 64 x 64 x 2 = 1,141,899,264 */
    assert_u64(component_in(&e, "vae_decode", "decode"), 1141899264ULL);
    assert_true(component_in(&e, "vae_decode", "decode") < full);

    /* the fallback: a 16 GiB card cannot decode 2048 px whole (F-DIF-07) */
    w.diffusion.tiled_vae = false;
    w.usable_bytes = 16ULL << 30;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "vae_decode", "decode"), 1141899264ULL);
}

/* ComfyUI runs a diffusion model on one GPU; batch grows the activations. */
static void split_and_batch(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    const struct vf_engine *eng = vf_engine_find("comfyui");
    assert_non_null(eng);
    const char *why = NULL;
    assert_true(eng->can_split(&m, NULL, 1, &why));
    assert_false(eng->can_split(&m, NULL, 2, &why));
    assert_string_equal(why, "ComfyUI runs a diffusion model on one GPU");

    struct vf_workload w = image();
    w.gpus = 2;
    struct vf_estimate e;
    struct vf_error err = {0};
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "one GPU"));

    /* F-DIF-05: batch 4: area 4 x 16384 = 65,536 x 2 B x 0.01 x 3.1 MiB = 4,260,607,557 (floored
     * once, so one more than 4 x 1,065,151,889) */
    w = image();
    w.diffusion.batch = 4;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "activations", "denoise"), 4260607557ULL);

    /* F-FIT-01 with this engine: fp8 Flux on an RTX 4090 (25,394,413,568 usable). The
     * denoise phase is the peak (F-DIF-06): the fp8 transformer 11,901,408,320 + 800 MiB
     * (F-DIF-08) + the reservation B x 1,065,151,889.28 (F-DIF-05; F-DIF-04's B x 509,607,936
     * is smaller); it leaves 12,654,144,448 B, room for 11.88 samples: batch 11
     * (24,456,939,903 B), 12 is 25,522,091,792 */
    struct vf_fit f;
    w = weights(VF_TASK_IMAGE, "fp8");
    assert_int_equal(vf_fit(th_arena, &m, &w, "rtx-4090", 25394413568ULL, 1, &f, &err), VF_OK);
    assert_true(f.fits);
    assert_u64(f.max_batch, 11);
    assert_int_equal(vf_fit(th_arena, &m, &w, "rtx-4090", 25394413568ULL, 2, &f, &err), VF_OK);
    assert_false(f.fits);
    assert_non_null(f.why_not);
}

/* Wrong tasks and workloads give clear errors. */
static void bad_workloads(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = {.task = VF_TASK_VIDEO};
    struct vf_estimate e;
    struct vf_error err = {0};
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "generates images"));
    w = image();
    w.diffusion.width = 4;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_ERANGE);
    assert_non_null(strstr(err.msg, "width and height"));
    w = image();
    w.diffusion.frames = 9;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    w = weights(VF_TASK_IMAGE, "awq");
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "AWQ"));
    /* a language model has no pipeline */
    struct vf_model llm = th_model("llama-3.1-8b");
    w = image();
    assert_int_equal(vf_estimate(th_arena, &llm, &w, &e, &err), VF_EINVAL);
}

/* A minimal valid pipeline file, with one key replaced by `patch` (a "key": value text). */
static const char *good =
    "{\"format\": \"vramfit-pipeline/1\", \"name\": \"T\", \"task\": \"image\","
    " \"defaults\": {\"width\": 512, \"height\": 512, \"frames\": 1, \"steps\": 4},"
    " \"denoiser\": {\"component\": \"transformer\", \"arch\": \"x\", \"params\": 1000,"
    " \"experts\": 1, \"dtype\": \"bf16\", \"hidden\": 64, \"heads\": 1, \"head_dim\": 64,"
    " \"layers\": 2, \"ffn\": 256, \"patch\": [1, 2, 2], \"latent_channels\": 16,"
    " \"joint_text\": true, \"act_widths\": 4, \"cfg\": false,"
    " \"comfy_memory_usage_factor\": 1.0},"
    " \"text_tokens\": 8,"
    " \"text_encoders\": [{\"name\": \"t\", \"params\": 10, \"dtype\": \"fp16\","
    " \"fp8_file\": true}],"
    " \"vae\": {\"params\": 10, \"dtype\": \"bf16\", \"spatial\": 8, \"temporal\": 1,"
    " \"latent_channels\": 16, \"decode_coef\": 2178, \"decode_per_frame\": false}}";

static enum vf_err parse(const char *text, struct vf_error *err)
{
    struct vf_model m;
    return vf__pipeline_from_json(th_arena, text, strlen(text), "pipelines/t.json", &m, err);
}

/* `good` with the first occurrence of `from` replaced by `to`. */
static const char *mutate(const char *from, const char *to)
{
    const char *at = strstr(good, from);
    if (!at)
        fail_msg("no '%s' in the test file", from);
    return vf_arena_printf(th_arena, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
}

static void expect(const char *text, enum vf_err code, const char *msg)
{
    struct vf_error err = {0};
    assert_int_equal(parse(text, &err), code);
    if (!strstr(err.msg, msg))
        fail_msg("message '%s' lacks '%s'", err.msg, msg);
    assert_non_null(strstr(err.msg, "pipelines/t.json"));
}

static void malformed_files(void **state)
{
    (void)state;
    struct vf_error err = {0};
    assert_int_equal(parse(good, &err), VF_OK);
    expect("{\"format\": ", VF_EFORMAT, "cannot parse 'pipelines/t.json'");
    expect("[1, 2]", VF_EFORMAT, "the top level is not an object");
    expect(mutate("\"vramfit-pipeline/1\"", "\"vramfit-pipeline/9\""), VF_EUNSUPPORTED,
           "format: 'vramfit-pipeline/9'");
    expect(mutate("\"params\": 1000,", ""), VF_EFORMAT, "denoiser.params: is missing");
    expect(mutate("\"params\": 1000", "\"params\": -3"), VF_EFORMAT,
           "denoiser.params: -3 is negative");
    expect(mutate("\"params\": 1000", "\"params\": 1.5"), VF_EFORMAT, "not a whole number");
    expect(mutate("\"params\": 1000", "\"params\": 1e30"), VF_ELIMIT, "exceeds the limit");
    expect(mutate("\"params\": 1000", "\"params\": 99999999999999999"), VF_ELIMIT,
           "denoiser.params: 99999999999999999 exceeds the limit");
    expect(mutate("\"params\": 1000", "\"params\": \"big\""), VF_EFORMAT, "is not a number");
    expect(mutate("\"dtype\": \"bf16\", \"hidden\"", "\"dtype\": \"int3\", \"hidden\""), VF_EFORMAT,
           "denoiser.dtype: 'int3' is not bf16 or fp16");
    expect(mutate("[1, 2, 2]", "[1, 2]"), VF_EFORMAT, "denoiser.patch");
    expect(mutate("[1, 2, 2]", "[1, 0, 2]"), VF_EFORMAT, "denoiser.patch");
    expect(mutate("\"task\": \"image\"", "\"task\": \"audio\""), VF_EFORMAT, "task");
    expect(mutate("\"experts\": 1", "\"experts\": 0"), VF_EFORMAT,
           "denoiser.experts: 0 is below the minimum 1");
    expect(mutate("\"comfy_memory_usage_factor\": 1.0", "\"comfy_memory_usage_factor\": -1"),
           VF_ERANGE, "comfy_memory_usage_factor");
    expect(mutate("[{\"name\"", "[1, {\"name\""), VF_EFORMAT, "text_encoders[0]: is not an object");
    expect(mutate("\"fp8_file\": true", "\"fp8_file\": 1"), VF_EFORMAT,
           "text_encoders[0].fp8_file: is not true or false");
    /* F-DIF-15's optional counts: within the encoder's params, never more */
    expect(mutate("\"fp8_file\": true", "\"fp8_file\": true, \"keep_fp32_params\": -1"), VF_EFORMAT,
           "text_encoders[0].keep_fp32_params: -1 is negative");
    expect(mutate("\"fp8_file\": true", "\"fp8_file\": true, \"nonlinear_params\": 1e40"),
           VF_ELIMIT, "text_encoders[0].nonlinear_params");
    expect(mutate("\"latent_channels\": 16, \"decode", "\"latent_channels\": 4, \"decode"),
           VF_EFORMAT, "vae.latent_channels: differs");
    /* F-DIF-17's optional decoder: four levels of 1 to 4096 channels, a boolean upcast */
    expect(mutate("\"latent_channels\": 16, \"decode",
                  "\"decoder_channels\": [128, 256, 512], \"latent_channels\": 16, \"decode"),
           VF_EFORMAT, "vae.decoder_channels: is not an array of 4");
    expect(mutate("\"latent_channels\": 16, \"decode",
                  "\"decoder_channels\": [128, 0, 512, 512], \"latent_channels\": 16, \"decode"),
           VF_EFORMAT, "vae.decoder_channels: holds a value");
    expect(mutate("\"latent_channels\": 16, \"decode",
                  "\"decoder_channels\": [1, 1, 1, 99999], \"latent_channels\": 16, \"decode"),
           VF_EFORMAT, "vae.decoder_channels: holds a value");
    expect(mutate("\"latent_channels\": 16, \"decode",
                  "\"force_upcast\": \"yes\", \"latent_channels\": 16, \"decode"),
           VF_EFORMAT, "vae.force_upcast: is not true or false");
    expect(mutate("\"frames\": 1", "\"frames\": 5"), VF_EFORMAT, "defaults.frames");
    expect(mutate("\"width\": 512", "\"width\": 8"), VF_EFORMAT, "defaults.width");
    expect(mutate("\"name\": \"T\", ", "\"name\": \"T\", \"name\": \"U\", "), VF_EFORMAT,
           "cannot parse");
}

/*
 * F-DIF-12: block swap and the text encoders on the CPU. Wan 2.2 T2V-A14B fp8: one expert
 * 14,288,491,584 params at 1 B (fp8 linears; the pipeline's bytes as F-DIF-01 counts them,
 * E); a block is E / 40. --offload block-swap 20 leaves E - 20 x (E / 40) on the GPU; the host
 * holds the 20 blocks and the idle expert: 20 x (E / 40) + E. --text-encoder cpu takes the
 * encoders off the GPU (0 in the encode phase) and puts them in host RAM.
 */
static void block_swap_and_cpu_encoders(void **state)
{
    (void)state;
    struct vf_model m = th_model("wan2.2-t2v-a14b");
    struct vf_workload w = weights(VF_TASK_VIDEO, "fp8");
    struct vf_estimate e0, e;
    estimate(&m, &w, &e0);
    uint64_t E = component_in(&e0, "transformer", "denoise"), block = E / 40;
    w.diffusion.offload = VF_DOFF_BLOCK_SWAP;
    w.diffusion.block_swap = 20;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "transformer", "denoise"), E - 20 * block);
    assert_u64(e.host_bytes, 20 * block + E);
    w.diffusion.block_swap = 41; /* more blocks than the model has */
    struct vf_error err = {0};
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    w.diffusion.offload = VF_DOFF_NONE;
    w.diffusion.text_encoder = VF_TE_CPU;
    estimate(&m, &w, &e);
    uint64_t te = component_in(&e0, "text_encoders", "encode");
    assert_u64(component_in(&e, "text_encoders", "encode"), 0);
    assert_u64(e.host_bytes, te);
}

/*
 * F-DIF-11: a LoRA of rank 16 on FLUX.1 [dev]: 16 x (10 x 3072 + 2 x 12288) x 57 blocks x 2 B
 * = 16 x 55,296 x 57 x 2 = 100,859,904 B per file; two files 201,719,808 B in the denoise
 * phase. --cfg on doubles nothing in ComfyUI's estimate (it batches cond and uncond only when
 * they fit) but is said; --text-encoder-weights fp8 stores T5-XXL (4,762,310,656) and CLIP-L
 * (123,060,480) at 1 B: 4,885,371,136 B.
 */
static void loras_and_encoder_weights(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    w.diffusion.loras = 2;
    struct vf_estimate e;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "loras", "denoise"), 201719808ULL);
    w.diffusion.loras = 0;
    assert_int_equal(vf_quant_parse("fp8", &w.diffusion.te_weights, NULL), VF_OK);
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "text_encoders", "encode"), 4885371136ULL);
}

/*
 * F-DIF-14: the diffusers engine on FLUX.1 [dev] bf16 at 1024^2: everything resident, the
 * transformer 2 x 11,901,408,320 + T5-XXL and CLIP-L 2 x 4,885,371,136 + the VAE 2 x
 * 83,800,000 = 33,741,158,912 B (31.42 GiB: the 31.447 GB diffusers measured after loading,
 * df-flux-dev-h100-bf16); the peak is the decode: + 2178 x 128 x 128 x 64 x 2 B =
 * 4,567,597,056 (F-DIF-07) + the CUDA context 419,430,400 = 38,728,186,368.
 * enable_model_cpu_offload: one model on the GPU per phase, every model kept in host RAM
 * (33,741,158,912 B); the peak is the denoise: the transformer 23,802,816,640 + one sample's
 * activations 4608 x 18 x 3072 x 2 = 509,607,936 (F-DIF-04; FLUX.1 [dev] is guidance
 * distilled, no uncond batch) + 419,430,400 = 24,731,854,976. int8 (movable): 11,901,408,320 +
 * 509,607,936 + 419,430,400 = 12,830,446,656, still the denoise. With the transformer and the
 * encoders in bitsandbytes LLM.int8 both stay on the GPU (.to() cannot move 8-bit
 * bitsandbytes models) in every phase, and the decode becomes the peak: 11,901,408,320 +
 * the encoders as transformers loads them under bitsandbytes (F-DIF-15: T5's linear weights
 * 3,623,878,656 x 1 B + its `wo` 1,006,632,960 x 4 B in fp32 + embedding and norms
 * 131,799,040 x 2 B = 7,914,008,576; CLIP-L 123,060,480 x 1 B) 8,037,069,056 + the VAE
 * 167,600,000 + 4,567,597,056 + 419,430,400 = 25,093,104,832.
 */
static void diffusers_phases(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    w.engine = "diffusers";
    struct vf_estimate e;
    estimate(&m, &w, &e);
    uint64_t resident = component_in(&e, "transformer", NULL) +
                        component_in(&e, "text_encoders", NULL) + component_in(&e, "vae", NULL);
    assert_u64(resident, 33741158912ULL);
    assert_u64(component_in(&e, "vae_decode", "decode"), 4567597056ULL);
    assert_string_equal(e.peak_phase, "decode");
    assert_u64(e.total_bytes, resident + 4567597056ULL + 419430400ULL);
    w.diffusion.offload = VF_DOFF_MODEL_CPU;
    struct vf_estimate off;
    estimate(&m, &w, &off);
    assert_u64(off.total_bytes, 24731854976ULL);
    assert_string_equal(off.peak_phase, "denoise");
    assert_u64(off.host_bytes, 33741158912ULL);
    assert_int_equal(vf_quant_parse("int8", &w.weights, NULL), VF_OK);
    assert_int_equal(vf_quant_parse("int8", &w.diffusion.te_weights, NULL), VF_OK);
    struct vf_estimate i8, q;
    estimate(&m, &w, &i8);
    assert_int_equal(vf_quant_parse("bnb-int8", &w.weights, NULL), VF_OK);
    assert_int_equal(vf_quant_parse("bnb-int8", &w.diffusion.te_weights, NULL), VF_OK);
    estimate(&m, &w, &q);
    /* int8 T5-XXL + CLIP-L (4,885,371,136 B) and the transformer stay resident in every
     * phase: more than the movable run's peak by more than the encoders' bytes */
    assert_string_equal(i8.peak_phase, "denoise");
    assert_u64(i8.total_bytes, 12830446656ULL);
    assert_string_equal(q.peak_phase, "decode");
    assert_u64(q.total_bytes, 25093104832ULL);
    bool said = false;
    for (size_t i = 0; i < q.n_assumptions; i++)
        said |= strstr(q.assumptions[i], "stay on the GPU") != NULL;
    assert_true(said);
    /* the ComfyUI modes are refused by diffusers, and the other way round */
    struct vf_error err = {0};
    w.diffusion.offload = VF_DOFF_LOWVRAM;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
}

/*
 * F-DIF-15: bitsandbytes in a diffusers pipeline, FLUX.1 [dev] with the transformer and the
 * encoders in nf4 (the diffusers quantization benchmark's "bitsandbytes 4-bit" rows).
 * transformers' models/t5/modeling_t5.py T5PreTrainedModel sets _keep_in_fp32_modules =
 * ["wo"]; quantizers/quantizer_bnb_4bit.py Bnb4BitHfQuantizer sets use_keep_in_fp32_modules =
 * True and _process_model_before_weight_loading adds those modules to modules_to_not_convert;
 * modeling_utils.py from_pretrained keeps them fp32 when "torch_dtype == torch.float16 or
 * getattr(hf_quantizer, 'use_keep_in_fp32_modules', False)" - so under bitsandbytes whatever
 * the dtype; replace_with_bnb_linear converts nn.Linear only. T5-XXL: linear 4,762,310,656 -
 * 1,006,632,960 - 131,799,040 = 3,623,878,656 at 4 bits = 1,811,939,328 + wo 1,006,632,960 x 4
 * = 4,026,531,840 + embedding and norms 131,799,040 x 2 = 263,598,080 -> 6,102,069,248 (2.56x
 * the flat 4-bit 2,381,155,328); CLIP-L (no such modules declared) 123,060,480 / 2 =
 * 61,530,240; encoders 6,163,599,488.
 * Load: diffusers' quantizers/bitsandbytes/bnb_quantizer.py update_device_map (and
 * transformers' quantizer_bnb_4bit.py) put a model loaded with no device_map on the current
 * CUDA device, where bitsandbytes quantizes it; pipeline_utils.py enable_model_cpu_offload
 * hooks them afterwards. The nf4 transformer 11,901,408,320 / 2 = 5,950,704,160 and the
 * encoders are on the card together: 12,114,303,648 + the context 419,430,400 =
 * 12,533,734,048 B, the peak over the denoise phase's 5,950,704,160 + 509,607,936 +
 * 419,430,400 (measured df-flux-dev-h100-bnb-4bit-cpuoffload: 12.383 GiB reserved, ours 11.28
 * GiB without the context, -8.9 %; the flat 4-bit encoders and no load phase gave 6.02 GiB,
 * -51 %). Without bitsandbytes (quanto int4) there is no load phase.
 */
static void diffusers_bnb(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = weights(VF_TASK_IMAGE, "nf4");
    w.engine = "diffusers";
    w.diffusion.offload = VF_DOFF_MODEL_CPU;
    assert_int_equal(vf_quant_parse("nf4", &w.diffusion.te_weights, NULL), VF_OK);
    struct vf_estimate e;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "text_encoders", "load"), 6163599488ULL);
    assert_u64(component_in(&e, "transformer", "load"), 5950704160ULL);
    assert_string_equal(e.peak_phase, "load");
    assert_u64(e.total_bytes, 12533734048ULL);
    assert_u64(component_in(&e, "transformer", "denoise"), 5950704160ULL);
    /* resident (pipe.to("cuda")): no load phase; the encoders keep the fp32 wo */
    w.diffusion.offload = VF_DOFF_NONE;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "text_encoders", "all"), 6163599488ULL);
    assert_string_not_equal(e.peak_phase, "load");
    /* quanto int4: nn.Linear quantized by another library, no keep_in_fp32 rule applied
     * (4,885,371,136 / 2 = 2,442,685,568) and no load phase */
    w.diffusion.offload = VF_DOFF_MODEL_CPU;
    assert_int_equal(vf_quant_parse("int4", &w.weights, NULL), VF_OK);
    assert_int_equal(vf_quant_parse("int4", &w.diffusion.te_weights, NULL), VF_OK);
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "text_encoders", "encode"), 2442685568ULL);
    assert_string_equal(e.peak_phase, "denoise");
}

/*
 * F-DIF-16: how diffusers' vae.decode runs, SDXL batch 4 at 1024^2 (the VAE bf16 here, 83,653,863
 * params = 167,307,726 B). Whole batch (AutoencoderKL.decode): 4 x 2178 x 128 x 128 x 64 x 2 =
 * 4 x 4,567,597,056 = 18,270,388,224 (F-DIF-07). vae.enable_slicing() (AutoencoderKL.decode:
 * z.split(1) when use_slicing): one sample, 4,567,597,056. AutoencoderTiny (madebyollin/taesd
 * taesd.py; diffusers autoencoder_tiny.py, 64 channels, decoder blocks (3, 3, 3, 1), encoder
 * blocks (1, 3, 3, 3)) for 4 latent channels: decoder conv(4, 64) 2,368 + 10 Blocks x 110,784
 * + 3 x 36,864 + conv(64, 3) 1,731 = 1,222,531; encoder conv(3, 64) 1,792 + Block 110,784 + 3 x
 * (36,864 + 3 x 110,784) + conv(64, 4) 2,308 = 1,222,532; 2,445,063 params = 4,890,126 B at 16
 * bit; its decode 3 x 64 x 1024 x 1024 x 2 = 402,653,184 a sample, x 4 = 1,610,612,736. The
 * decode stays the peak (the step 4096 x 8 x 28 x 640 x 2 = 1,174,405,120 is smaller), so the
 * totals differ by the decodes (and the VAE, and the full VAE's upcast, F-DIF-17). ComfyUI
 * refuses both modes; TAESD refuses video.
 */
static void diffusers_vae_modes(void **state)
{
    (void)state;
    struct vf_model m = th_model("sdxl");
    struct vf_workload w = diffusers_images(4);
    struct vf_estimate full, sl, tiny;
    estimate(&m, &w, &full);
    assert_u64(component_in(&full, "vae_decode", "decode"), 18270388224ULL);
    /* F-DIF-04, the SDXL UNet's widest level (diffusers attention.py BasicTransformerBlock's
     * GEGLU feed-forward at 64 x 64 + the unconsumed skips, 28 x 640): 4096 tokens x 8 samples
     * (4 images under CFG) x 28 x 640 x 2 B */
    assert_u64(component_in(&full, "activations", "denoise"), 1174405120ULL);
    assert_int_equal(vf_diffusion_set(&w.diffusion, "vae-decode", "sliced", NULL), VF_OK);
    estimate(&m, &w, &sl);
    assert_u64(component_in(&sl, "vae_decode", "decode"), 4567597056ULL);
    assert_u64(sl.total_bytes, full.total_bytes - 3 * 4567597056ULL);
    assert_int_equal(vf_diffusion_set(&w.diffusion, "vae-decode", "tiny", NULL), VF_OK);
    assert_false(w.diffusion.sliced_vae); /* one mode at a time */
    estimate(&m, &w, &tiny);
    assert_u64(component_in(&tiny, "vae", NULL), 4890126ULL);
    assert_u64(component_in(&tiny, "vae_decode", "decode"), 1610612736ULL);
    assert_string_equal(tiny.peak_phase, "decode");
    /* ... and AutoencoderTiny is not upcast (its config has no force_upcast): the full VAE's
     * fp32 upcast, 146,279,846 B (F-DIF-17), goes too */
    assert_u64(tiny.total_bytes, full.total_bytes - 18270388224ULL - 146279846ULL + 1610612736ULL -
                                     167307726ULL + 4890126ULL);
    struct vf_error err = {0};
    w.engine = "comfyui";
    assert_int_equal(vf_estimate(th_arena, &m, &w, &tiny, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "AutoencoderTiny"));
    assert_int_equal(vf_diffusion_set(&w.diffusion, "vae-decode", "sliced", NULL), VF_OK);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &tiny, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "enable_slicing"));
    struct vf_model wan = th_model("wan2.1-t2v-1.3b");
    struct vf_workload v = {.task = VF_TASK_VIDEO, .engine = "diffusers"};
    assert_int_equal(vf_diffusion_set(&v.diffusion, "vae-decode", "taesd", NULL), VF_OK);
    assert_int_equal(vf_estimate(th_arena, &wan, &v, &tiny, &err), VF_EUNSUPPORTED);
    assert_int_equal(vf_diffusion_set(&v.diffusion, "vae-decode", "half", &err), VF_EINVAL);
}

/*
 * F-DIF-18: the SDXL UNet's step under diffusers' eager attention. models/attention_processor.py
 * AttnProcessor.__call__ calls Attention.get_attention_scores, which builds baddbmm's input
 * (torch.empty(batch x heads, N, N)) and the scores from torch.baddbmm, deletes the first, then
 * takes the softmax beside the scores: 2 x samples x heads x N^2 x 2 B at once (upcast_softmax
 * is False in the UNet's BasicTransformerBlock attention). AttnProcessor2_0.__call__ hands q, k,
 * v to F.scaled_dot_product_attention, which keeps no N^2 tensor (F-DIF-04). The first attention
 * level (64 x 64 at 1024^2, 4096 tokens, 640 / 64 = 10 heads) has the most scores: the 32 x 32
 * level holds 20 heads x 1024^2 = 1/8 of them.
 * Batch 4 under CFG, 8 samples: 2 x 8 x 10 x 4096^2 x 2 = 5,368,709,120 on top of the SDPA
 * step's 4096 x 8 x 28 x 640 x 2 = 1,174,405,120 -> 6,543,114,240; the decode stays the peak
 * (the public fp16 eager-UNet row and the SDPA one both measure 21.72 GB: decode-bound).
 * 2048^2, batch 1 (2 samples): 16,384 tokens; SDPA 16,384 x 2 x 28 x 640 x 2 = 1,174,405,120,
 * the decode 2178 x 256 x 256 x 64 x 2 = 18,270,388,224 the peak; eager + 2 x 2 x 10 x 16,384^2 x
 * 2 = 21,474,836,480 -> 22,649,241,600 and the denoise phase becomes the peak.
 */
static void diffusers_eager_attention(void **state)
{
    (void)state;
    struct vf_model m = th_model("sdxl");
    struct vf_workload w = diffusers_images(4);
    struct vf_estimate sdpa, eager;
    estimate(&m, &w, &sdpa);
    assert_int_equal(vf_diffusion_set(&w.diffusion, "attention", "AttnProcessor", NULL), VF_OK);
    assert_true(w.diffusion.eager_attn);
    estimate(&m, &w, &eager);
    assert_u64(component_in(&sdpa, "activations", "denoise"), 1174405120ULL);
    assert_u64(component_in(&eager, "activations", "denoise"), 6543114240ULL);
    assert_string_equal(eager.peak_phase, "decode");
    assert_u64(eager.total_bytes, sdpa.total_bytes);
    w.diffusion.batch = 1;
    w.diffusion.width = w.diffusion.height = 2048;
    estimate(&m, &w, &eager);
    assert_u64(component_in(&eager, "activations", "denoise"), 22649241600ULL);
    assert_string_equal(eager.peak_phase, "denoise");
    assert_int_equal(vf_diffusion_set(&w.diffusion, "attention", "sdpa", NULL), VF_OK);
    estimate(&m, &w, &sdpa);
    assert_u64(component_in(&sdpa, "activations", "denoise"), 1174405120ULL);
    assert_string_equal(sdpa.peak_phase, "decode");
    /* ComfyUI has its own fallbacks; Flux's processors need SDPA */
    struct vf_error err = {0};
    w.diffusion.eager_attn = true;
    w.engine = "comfyui";
    assert_int_equal(vf_estimate(th_arena, &m, &w, &eager, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "AttnProcessor"));
    struct vf_model flux = th_model("flux1-dev");
    w.engine = "diffusers";
    assert_int_equal(vf_estimate(th_arena, &flux, &w, &eager, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "SDPA-only"));
    assert_int_equal(vf_diffusion_set(&w.diffusion, "attention", "flash", &err), VF_EINVAL);
}

/*
 * F-DIF-17: an AutoencoderKL decoder's own tensors (diffusers models/autoencoders/vae.py
 * Decoder.forward, block_out_channels 128, 256, 512, 512 reversed into up blocks 512, 512, 256,
 * 128), per output pixel, at the widest point:
 *   the last up block's first ResnetBlock2D (resnet.py ResnetBlock2D.forward, 256 -> 128 at the
 *   output size): its input (also held by Decoder.forward's `sample`), norm1 and SiLU at once,
 *   3 x 256 = 768; at its end input 256 + conv2 128 + conv_shortcut 128 + the sum 128 + the sum /
 *   output_scale_factor 128 = 768;
 *   the Upsample2D before it (upsampling.py Upsample2D.forward): the up block's input 512 and
 *   the upsampler's input 256 at a quarter of the pixels (192), the interpolated 256 and the
 *   conv's 256: 704 elements; in bf16 the interpolation runs in fp32 ("upsample_nearest2d_out_frame
 *   op does not support bfloat16") and is cast back while the fp32 copy lives: 192 x 2 + 256 x 4
 *   + 256 x 2 = 1920 B.
 * fp32 (SDXL upcast): max(768, 704) x 4 = 3072 B; bf16 (Flux): max(768 x 2, 1920) = 1920 B; fp16:
 * max(1536, 1408) = 1536 B; at 1024^2 (1,048,576 px): 3,221,225,472, 2,013,265,920 and
 * 1,610,612,736 B a sample.
 * The upcast (pipeline_stable_diffusion_xl.py StableDiffusionXLPipeline.upcast_vae: vae.to(fp32),
 * then post_quant_conv, decoder.conv_in and decoder.mid_block back to fp16 when the mid-block's
 * processor is AttnProcessor2_0): kept 16-bit = mid-block 2 x (18 x 512^2 + 6 x 512) + (4 x 512^2
 * + 6 x 512) = 10,494,976 + conv_in 9 x 4 x 512 + 512 = 18,944 + post_quant_conv 4 x 4 + 4 = 20
 * -> 10,513,940; the rest gains 2 B: (83,653,863 - 10,513,940) x 2 = 146,279,846 B in the decode
 * phase. FluxPipeline decodes at the pipeline's bf16 (no upcast); an fp32 VAE given by
 * --vae-dtype is not upcast again.
 */
static void vae_decoder_floor_and_upcast(void **state)
{
    (void)state;
    struct vf_model m = th_model("sdxl");
    struct vf_pipe_run r = {.pv = *m.pipeline};
    vf__pipeline_geom(m.pipeline, 1024, 1024, 1, &r.g);
    assert_u64(vf__pipeline_vae_floor(&r, VF_DT_F32), 3221225472ULL);
    assert_u64(vf__pipeline_vae_floor(&r, VF_DT_BF16), 2013265920ULL);
    assert_u64(vf__pipeline_vae_floor(&r, VF_DT_F16), 1610612736ULL);
    assert_u64(vf__pipeline_vae_upcast_bytes(m.pipeline), 146279846ULL);
    assert_true(vf__pipeline_vae_upcasts(&r));
    struct vf_workload w = diffusers_images(4);
    struct vf_estimate e, f32;
    estimate(&m, &w, &e);
    assert_u64(component_in(&e, "vae_upcast", "decode"), 146279846ULL);
    assert_string_equal(e.peak_phase, "decode");
    bool said = false;
    for (size_t i = 0; i < e.n_assumptions; i++) /* the floor x batch 4: 12.00 GiB */
        said |= strstr(e.assumptions[i], "own tensors at its peak are 12.00 GiB") != NULL;
    assert_true(said);
    w.diffusion.vae_dtype = VF_DT_F32;
    estimate(&m, &w, &f32);
    for (size_t i = 0; i < f32.n_components; i++)
        assert_string_not_equal(f32.components[i].name, "vae_upcast");
    struct vf_model flux = th_model("flux1-dev");
    struct vf_pipe_run fr = {.pv = *flux.pipeline};
    assert_false(vf__pipeline_vae_upcasts(&fr));
    /* the video VAEs have no decoder_channels: no floor */
    struct vf_model wan = th_model("wan2.1-t2v-1.3b");
    struct vf_pipe_run wr = {.pv = *wan.pipeline};
    vf__pipeline_geom(wan.pipeline, 832, 480, 81, &wr.g);
    assert_u64(vf__pipeline_vae_floor(&wr, VF_DT_BF16), 0);
}

/*
 * F-DIF-03: sizes off the stride are floored as ComfyUI does (Flux: 8 px cells x patch 2 =
 * 16): 1000 x 1000 runs as 992 x 992 = 62 x 62 = 3844 tokens.
 * F-FIT-02: the largest size at the aspect and the most frames (4n + 1) that fit. Wan 2.2
 * A14B fp8 on an RTX 5090 (33,677,180,928 usable): the denoise phase is the peak, one fp8
 * expert 14,288,491,584 + 800 MiB + the reservation (F-DIF-05, 2 x 0.01 x 2.304230 (5120/2222) MiB
 * = 48,323.2 B per latent cell; F-DIF-04's 25,600 B per cell is smaller): 18,549,828,544 B left.
 * At 1280 x 720 (90 x 160 cells a frame) 101 frames = 26 latent frames fit (33,219,560,534),
 * 105 = 27 do not (33,915,414,693). At 81 frames (21 latent) and 16:9, width 1440 (x 800 =
 * 100 x 180 cells) fits (33,393,524,074), 1456 x 816 does not (33,965,864,120).
 */
static void stride_and_solvers(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    w.diffusion.width = w.diffusion.height = 1000;
    struct vf_estimate e;
    estimate(&m, &w, &e);
    assert_int_equal(e.diffusion.width, 992);
    assert_u64(e.diffusion_tokens, 3844);
    struct vf_model v = th_model("wan2.2-t2v-a14b");
    struct vf_workload x = weights(VF_TASK_VIDEO, "fp8");
    x.diffusion.width = 1280;
    x.diffusion.height = 720;
    struct vf_fit f;
    struct vf_error err = {0};
    assert_int_equal(vf_fit(th_arena, &v, &x, "rtx-5090", 33677180928ULL, 1, &f, &err), VF_OK);
    assert_u64(f.max_frames, 101);
    assert_u64(f.max_width, 1440);
    assert_u64(f.max_height, 800);
    /* one more step of each no longer fits */
    struct vf_estimate big;
    x.diffusion.frames = f.max_frames + 4;
    estimate(&v, &x, &big);
    assert_true(big.total_bytes > 33677180928ULL);
}

/*
 * F-DIF-01/03: the six pipelines issue 7 adds, at their native sizes (the files' defaults):
 * tokens = latent frames x (rows / patch) x (columns / patch), the denoiser 2 B x params.
 *   SD 3.5 Medium 1024^2: (1024 / 8 / 2)^2 = 64^2 = 4096; 2 x 2,469,663,936;
 *   Qwen-Image 1328^2: (1328 / 16)^2 = 83^2 = 6889; 2 x 20,430,401,088;
 *   Wan 2.2 TI2V-5B 1280x704x121 (VAE 16 x 16 x 4): (120 / 4 + 1) x (704 / 32) x (1280 / 32)
 *     = 31 x 22 x 40 = 27,280; 2 x 4,999,787,712;
 *   Wan 2.2 I2V-A14B 1280x720x81: 21 x 45 x 80 = 75,600; one expert 2 x 14,288,901,184;
 *   HunyuanVideo 1280x720x129: (128 / 4 + 1) x 45 x 80 = 33 x 3600 = 118,800;
 *     2 x 12,821,012,544;
 *   LTX-Video 768x512x121 (VAE 32 x 32 x 8, patch 1): (120 / 8 + 1) x 16 x 24 = 6144;
 *     2 x 1,923,385,472.
 */
static void new_pipelines(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        enum vf_task task;
        uint64_t tokens, params;
    } c[] = {
        {"sd3.5-medium", VF_TASK_IMAGE, 4096, 2469663936ULL},
        {"qwen-image", VF_TASK_IMAGE, 6889, 20430401088ULL},
        {"wan2.2-ti2v-5b", VF_TASK_VIDEO, 27280, 4999787712ULL},
        {"wan2.2-i2v-a14b", VF_TASK_VIDEO, 75600, 14288901184ULL},
        {"hunyuanvideo", VF_TASK_VIDEO, 118800, 12821012544ULL},
        {"ltx-video", VF_TASK_VIDEO, 6144, 1923385472ULL},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct vf_model m = th_model(c[i].id);
        struct vf_workload w = {.task = c[i].task};
        struct vf_estimate e;
        estimate(&m, &w, &e);
        assert_u64(e.diffusion_tokens, c[i].tokens);
        assert_u64(component_in(&e, "transformer", "denoise"), 2 * c[i].params);
    }
}

/* F-SPD-18 on a made-up card of round figures (250 TFLOPS bf16, 1000 GB/s): Flux.1
 * dev at its default 1024x1024, 20 steps, no CFG: 4096 + 512 = 4608 tokens, 57 layers of
 * 3072. Elementwise (eager, 105 passes): 20 x 57 x 4608 x 3072 x 2 B x 105 / 1e12 B/s =
 * 3.3889 s; compiled (20 passes): x 20 / 105 = 0.6455 s. Launch floor (eager): 20 x 57 x
 * 2.7 ms = 3.078 s, none compiled. On this card the GPU time (16.6 s of linear layers alone)
 * exceeds the floor; on a card 1000x faster it does not, and the steps take the floor. */
static void speed_elementwise_and_launch_floor(void **state)
{
    (void)state;
    struct vf_model m = th_model("flux1-dev");
    struct vf_workload w = image();
    struct vf_estimate e = {0};
    estimate(&m, &w, &e);
    /* nothing offloaded here: the card's PCIe link plays no part */
    struct vf_gpu_spec g = {.bandwidth_gbps = 1000, .tflops_fp16 = 250, .tflops_bf16 = 250};
    struct vf_job_speed j;
    vf__speed_diffusion(&g, &m, &e, &w, 1, &j);
    assert_true(j.known);
    assert_true(fabs(j.elem_s - 3.3889) < 1e-3);
    assert_true(fabs(j.launch_s - 3.078) < 1e-9);
    double gpu = j.compute_s - j.encdec_s + j.attn_s + j.comm_s + j.elem_s;
    assert_true(gpu > j.launch_s);
    assert_true(fabs(j.seconds - (gpu + j.encdec_s)) < 1e-9);
    /* torch.compile: fewer passes, no floor */
    w.train.compile = true;
    w.train.given |= VF_TK_COMPILE;
    vf__speed_diffusion(&g, &m, &e, &w, 1, &j);
    assert_true(fabs(j.elem_s - 0.64550) < 1e-4);
    assert_true(j.launch_s == 0);
    /* eager on a card 1000x faster: the steps take the launch floor */
    w.train.compile = false;
    w.train.given = 0;
    g.tflops_fp16 = g.tflops_bf16 = 250000;
    g.bandwidth_gbps = 1e6;
    vf__speed_diffusion(&g, &m, &e, &w, 1, &j);
    assert_true(fabs(j.seconds - (3.078 + j.encdec_s)) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flux_guide_sizes),
        cmocka_unit_test(flux_phases),
        cmocka_unit_test(wan_tokens_experts),
        cmocka_unit_test(wan_small_encode_peak),
        cmocka_unit_test(tiled_vae),
        cmocka_unit_test(split_and_batch),
        cmocka_unit_test(bad_workloads),
        cmocka_unit_test(malformed_files),
        cmocka_unit_test(block_swap_and_cpu_encoders),
        cmocka_unit_test(loras_and_encoder_weights),
        cmocka_unit_test(diffusers_phases),
        cmocka_unit_test(diffusers_bnb),
        cmocka_unit_test(diffusers_vae_modes),
        cmocka_unit_test(diffusers_eager_attention),
        cmocka_unit_test(vae_decoder_floor_and_upcast),
        cmocka_unit_test(stride_and_solvers),
        cmocka_unit_test(new_pipelines),
        cmocka_unit_test(speed_elementwise_and_launch_floor),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
