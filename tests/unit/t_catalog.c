/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_catalog.c - the embedded catalog against the reference data, lookups, the TSV reader,
 * a corrupt --data-dir, the fake GPU backend, the arena and allocation failures.
 */
#include "th.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static struct vf_catalog *open_embedded(void)
{
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    assert_int_equal(vf_catalog_open(&c, NULL, &err), VF_OK);
    return c;
}

static void embedded_counts(void **state)
{
    (void)state;
    struct vf_catalog *c = open_embedded();
    /* every card of tests/fixtures/reference/gpus.json (34) and issue 23's five that it lacks
     * (RTX 3080, 3080 Ti, 3090 Ti, RTX 4000 Ada, RTX 5000 Ada: data/gpus.tsv cites their
     * sources); every LLM of models-llm.json (37)
     * + Llama 2 7B (the model of LLaMA-Factory's measured training table,
     * measured-public.jsonl), issue 21's GLM-4.7, GLM-4.7-Flash, Qwen3.5-397B-A17B and Command R
     * v01 (their configs cited in models.tsv) and 13 image/video pipelines of models-diffusion.json
     * (issue 7's list) */
    assert_u64(c->n_gpus, 39);
    assert_u64(c->n_models, 55);
    size_t llms = 0;
    for (size_t i = 0; i < c->n_models; i++)
        llms += c->models[i].task == VF_TASK_INFER;
    assert_u64(llms, 42);
    vf_catalog_close(c);
}

/* The catalog's cards agree with the reference gpus.json (tests/fixtures/reference/, a copy
 * of shared/reference/) where it states a number; a missing copy fails. */
static void gpus_match_reference(void **state)
{
    (void)state;
    json_error_t je;
    json_t *ref = json_load_file(TH_REFERENCE "gpus.json", 0, &je);
    if (!ref)
        fail_msg("fixture %s: %s", TH_REFERENCE "gpus.json", je.text);
    struct vf_catalog *c = open_embedded();
    size_t i, seen = 0;
    json_t *g;
    json_array_foreach(ref, i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "kind")), "gpu"))
            continue;
        const char *id = json_string_value(json_object_get(g, "id"));
        const struct vf_gpu_spec *s = vf_catalog_gpu(c, id);
        if (!s)
            fail_msg("card %s of the reference is not in the catalog", id);
        seen++;
        assert_u64(s->marketed_gb, json_integer_value(json_object_get(g, "memory_gb")));
        json_t *smi = json_object_get(g, "memory_mib_reported");
        if (json_is_integer(smi))
            assert_u64(s->smi_bytes, (uint64_t)json_integer_value(smi) << 20);
        /* CUDA's usable total is below nvidia-smi's by the driver's reservation: the measured
         * ones are 346 to 490 MiB (docs/CATALOG.md), so never more than 1 GiB */
        if (s->smi_bytes != VF_UNKNOWN) {
            assert_true(s->usable_bytes <= s->smi_bytes);
            assert_true(s->smi_bytes - s->usable_bytes <= (1ULL << 30));
        }
        json_t *b = json_object_get(g, "bf16"), *f8 = json_object_get(g, "fp8_native");
        if (json_is_boolean(b))
            assert_int_equal(s->bf16, json_is_true(b));
        if (json_is_boolean(f8))
            assert_int_equal(s->fp8, json_is_true(f8));
    }
    assert_u64(seen, 34);
    vf_catalog_close(c);
    json_decref(ref);
}

/* Every embedded models/ file is named by a models.tsv row, and every row's file parses. */
static void models_index(void **state)
{
    (void)state;
    struct vf_catalog *c = open_embedded();
    size_t files = 0;
    for (size_t i = 0; i < vf__n_embedded_files; i++) {
        const char *name = vf__embedded_files[i].name;
        if (strncmp(name, "models/", 7) && strncmp(name, "pipelines/", 10))
            continue;
        files++;
        bool named = false;
        for (size_t j = 0; j < c->n_models && !named; j++)
            named = !strcmp(c->models[j].file, name);
        if (!named)
            fail_msg("%s is in data/models but not in models.tsv", name);
    }
    assert_u64(files, c->n_models);
    struct vf_arena *a = vf_arena_open(0);
    for (size_t j = 0; j < c->n_models; j++) {
        struct vf_model m;
        struct vf_error err = {0};
        if (vf_model_resolve(a, c, c->models[j].id, &m, &err))
            fail_msg("%s: %s", c->models[j].id, err.msg);
        assert_string_equal(m.id, c->models[j].id);
        assert_true(m.params > 0 && (m.pipeline || m.n_layers > 0));
    }
    vf_arena_close(a);
    vf_catalog_close(c);
}

/* Issue 23: the speed columns of every card, with their sources; figures from the datasheets
 * and whitepapers named in speed_source (sparse figures halved). */
static void speed_columns(void **state)
{
    (void)state;
    struct vf_catalog *c = open_embedded();
    for (size_t i = 0; i < c->n_gpus; i++) {
        const struct vf_gpu_spec *g = &c->gpus[i];
        if (!*g->speed_source)
            fail_msg("%s: no speed_source", g->id);
        /* FP32 accumulate never beats FP16 accumulate; fp8 support means an fp8 rate */
        if (g->tflops_bf16 > g->tflops_fp16)
            fail_msg("%s: bf16 %.1f above fp16 %.1f", g->id, g->tflops_bf16, g->tflops_fp16);
        if (g->fp8 && g->tflops_fp16 > 0 && g->tflops_fp8 <= 0)
            fail_msg("%s: fp8 support without an fp8 rate", g->id);
        if (!g->fp8 && g->tflops_fp8 > 0)
            fail_msg("%s: an fp8 rate without fp8 support", g->id);
    }
    /* Ada whitepaper, RTX 4090: FP16 330.3 (FP16 acc), 165.2 (FP32 acc), INT8 660.6 dense */
    const struct vf_gpu_spec *g = vf_catalog_gpu(c, "rtx-4090");
    assert_true(g->tflops_fp16 == 330.3 && g->tflops_bf16 == 165.2 && g->tflops_int8 == 660.6);
    assert_true(g->pcie_gen == 4 && g->pcie_lanes == 16 && g->nvlink_gbps == 0);
    /* Ada whitepaper, RTX 4090: 128 SMs, boost 2520 MHz (F-SPD-01's per-SM bound) */
    assert_true(g->sms == 128 && g->boost_mhz == 2520);
    /* gpus.json tdp_w: RTX 4090 450 W ("default TDP of 450W"), RTX 6000 Ada 300 W (F-SPD-07) */
    assert_true(g->tdp_w == 450 && vf_catalog_gpu(c, "rtx-6000-ada")->tdp_w == 300);
    /* H100 SXM datasheet: BF16 1979, FP8 3958 sparse -> 989, 1979 dense; NVLink 900 GB/s */
    g = vf_catalog_gpu(c, "h100-sxm");
    assert_true(g->tflops_bf16 == 989 && g->tflops_fp8 == 1979 && g->nvlink_gbps == 900);
    /* unknown stays unknown: AWS publishes no tensor rate for the A10G */
    g = vf_catalog_gpu(c, "a10g");
    assert_true(g->tflops_fp16 == 0 && g->tflops_int8 == 0);
    /* no published SM count or clock for the B200: unknown, 0 */
    g = vf_catalog_gpu(c, "b200");
    assert_true(g->sms == 0 && g->boost_mhz == 0);
    /* no power in gpus.json for the RTX 5080: unknown, 0 */
    assert_true(vf_catalog_gpu(c, "rtx-5080")->tdp_w == 0);
    vf_catalog_close(c);
}

static void usable_anchors(void **state)
{
    (void)state;
    struct vf_catalog *c = open_embedded();
    char b[32];
    /* DESIGN section 8: CUDA reports 23.65 GiB on an RTX 4090, 79.22 GiB on an H100 80 GB */
    const struct vf_gpu_spec *g = vf_catalog_gpu(c, "rtx-4090");
    assert_non_null(g);
    assert_string_equal(vf_format_bytes(b, sizeof b, g->usable_bytes, VF_FMT_IEC), "23.65 GiB");
    assert_false(g->usable_derived);
    g = vf_catalog_gpu(c, "h100-sxm");
    assert_non_null(g);
    assert_string_equal(vf_format_bytes(b, sizeof b, g->usable_bytes, VF_FMT_IEC), "79.22 GiB");
    vf_catalog_close(c);
}

static void default_offers(void **state)
{
    (void)state;
    /* our guide's prices, EUR per hour, billed per minute */
    static const struct {
        const char *gpu;
        uint64_t micro;
    } want[] = {
        {"rtx-4090", 590000}, {"rtx-5090", 760000}, {"l40s", 1060000}, {"h100-sxm", 3900000}};
    struct vf_catalog *c = open_embedded();
    for (size_t k = 0; k < 4; k++) {
        bool found = false;
        for (size_t i = 0; i < c->n_offers; i++) {
            const struct vf_offer *o = &c->offers[i];
            if (!strcmp(o->gpu_id, want[k].gpu) && o->count == 1 && !strcmp(o->currency, "EUR")) {
                assert_u64(o->price_micro, want[k].micro);
                assert_string_equal(o->billing, "minute");
                found = true;
            }
        }
        assert_true(found);
    }
    vf_catalog_close(c);
}

/* vf_catalog_open_parts reads what it is asked for: an estimate's catalog has no offers,
 * the same cards and models; the embedded table is sorted (catalog.c looks files up with
 * bsearch), so every file of models.tsv is found. */
static void catalog_parts(void **state)
{
    (void)state;
    struct vf_catalog *all = open_embedded(), *est = NULL;
    struct vf_error err = {0};
    assert_int_equal(vf_catalog_open_parts(&est, NULL, VF_CATALOG_GPUS | VF_CATALOG_MODELS, &err),
                     VF_OK);
    assert_true(all->n_offers > 0);
    assert_u64(est->n_offers, 0);
    assert_u64(est->n_gpus, all->n_gpus);
    assert_u64(est->n_models, all->n_models);
    for (size_t i = 0; i < all->n_models; i++) {
        size_t len = 0;
        assert_non_null(vf_catalog_file(est->arena, est, all->models[i].file, &len, &err));
        assert_true(len > 0);
    }
    for (size_t i = 1; i < vf__n_embedded_files; i++)
        assert_true(strcmp(vf__embedded_files[i - 1].name, vf__embedded_files[i].name) < 0);
    vf_catalog_close(est);
    /* offers alone bring their cards (an offer names one) */
    assert_int_equal(vf_catalog_open_parts(&est, NULL, VF_CATALOG_OFFERS, &err), VF_OK);
    assert_u64(est->n_offers, all->n_offers);
    assert_u64(est->n_gpus, all->n_gpus);
    assert_u64(est->n_models, 0);
    vf_catalog_close(est);
    vf_catalog_close(all);
}

static void lookups(void **state)
{
    (void)state;
    struct vf_catalog *c = open_embedded();
    assert_string_equal(vf_catalog_gpu(c, "RTX 4090")->id, "rtx-4090");
    assert_string_equal(vf_catalog_gpu(c, "4090")->id, "rtx-4090");
    assert_string_equal(vf_catalog_gpu(c, "L40S")->id, "l40s");
    assert_null(vf_catalog_gpu(c, "h100")); /* PCIe, SXM, NVL: ambiguous */
    const struct vf_gpu_spec *near[8];
    assert_u64(vf_catalog_gpu_suggest(c, "h100", near, 8), 3);
    assert_null(vf_catalog_gpu(c, "voodoo5"));
    /* issue 28: an alias is whole words of one card's id or name, never a prefix of a word:
     * "409" is no word of rtx-4090 (DESIGN section 8); "l40" is the L40 alone (not also the
     * L40S, whose word is "l40s"); "6000" is a word of two cards */
    assert_null(vf_catalog_gpu(c, "rtx-409"));
    assert_u64(vf_catalog_gpu_suggest(c, "rtx-409", near, 8), 0);
    assert_string_equal(vf_catalog_gpu(c, "l40")->id, "l40");
    assert_null(vf_catalog_gpu(c, "6000"));
    assert_u64(vf_catalog_gpu_suggest(c, "6000", near, 8), 2);
    assert_string_equal(vf_catalog_gpu(c, "h100 sxm")->id, "h100-sxm");
    /* of several cards with the words, the one whose id ends with them: "3090" is the RTX
     * 3090 though the 3090 Ti has the word too; "4080" the RTX 4080, not the 4080 SUPER */
    assert_u64(vf_catalog_gpu_suggest(c, "3090", near, 8), 2);
    assert_string_equal(vf_catalog_gpu(c, "3090")->id, "rtx-3090");
    assert_string_equal(vf_catalog_gpu(c, "3090 ti")->id, "rtx-3090-ti");
    assert_string_equal(vf_catalog_gpu(c, "4080")->id, "rtx-4080");
    assert_string_equal(vf_catalog_gpu(c, "3080")->id, "rtx-3080");
    /* Ollama tags: family + the tag's words with a digit = an alias, letters and digits only */
    assert_string_equal(vf_catalog_model(c, "qwen3:32b")->alias, "qwen3-32b");
    assert_string_equal(vf_catalog_model(c, "llama3.1:70b-instruct-q4_K_M")->alias,
                        "llama-3.1-70b");
    assert_string_equal(vf_catalog_model(c, "qwen3:30b-a3b")->alias, "qwen3-30b-a3b");
    assert_null(vf_catalog_model(c, "qwen3:33b")); /* no such size */
    assert_null(vf_catalog_model(c, "qwen3:latest"));

    assert_string_equal(vf_catalog_model(c, "meta-llama/llama-3.1-8b-instruct")->id,
                        "meta-llama/Llama-3.1-8B-Instruct");
    assert_string_equal(vf_catalog_model(c, "llama-3.1-8b")->id,
                        "meta-llama/Llama-3.1-8B-Instruct");
    assert_string_equal(vf_catalog_model(c, "Llama-3.1-8B-Instruct")->id,
                        "meta-llama/Llama-3.1-8B-Instruct");
    assert_null(vf_catalog_model(c, "llama-3-70b"));
    const struct vf_catalog_model *sug[3];
    /* case-insensitive edit distance to the alias or the id (vf__edit_distance): exactly
     * three models are at 2 (llama-2-7b: 3 -> 2 and one 0 less; llama-3.1-70b, llama-3.3-70b:
     * ".1" / ".3" inserted), the next at 4 (llama-3.1-405b, -8b, 3.2-1b); ties keep the order
     * of data/models.tsv */
    size_t n = vf_catalog_suggest(c, "llama-3-70b", sug, 3);
    assert_int_equal(n, 3);
    assert_string_equal(sug[0]->alias, "llama-2-7b");
    assert_string_equal(sug[1]->alias, "llama-3.1-70b");
    assert_string_equal(sug[2]->alias, "llama-3.3-70b");

    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    struct vf_error err = {0};
    assert_int_equal(vf_model_resolve(a, c, "llama-3-70b", &m, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "unknown model 'llama-3-70b'"));
    assert_non_null(strstr(err.msg, "did you mean: "));
    assert_int_equal(vf_model_resolve(a, c, "qwen3-32b", &m, &err), VF_OK);
    assert_int_equal(m.provenance, VF_PROV_CATALOG);
    vf_arena_close(a);
    vf_catalog_close(c);
}

static void tsv_reader(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf__tsv t;
    struct vf_error err = {0};
    const char ok[] = "# comment\na\tb\r\n\n1\t2\n# more\n3\t4";
    assert_int_equal(vf__tsv_parse(a, ok, sizeof ok - 1, "x.tsv", &t, &err), VF_OK);
    assert_u64(t.n_rows, 2);
    assert_string_equal(t.rows[1][1], "4");
    assert_u64(t.lines[1], 6);
    assert_int_equal(vf__tsv_col(&t, "b"), 1);
    assert_int_equal(vf__tsv_col(&t, "c"), -1);
    const char short_row[] = "a\tb\n1\t2\n3\n";
    assert_int_equal(vf__tsv_parse(a, short_row, sizeof short_row - 1, "x.tsv", &t, &err),
                     VF_EFORMAT);
    assert_string_equal(err.msg, "x.tsv:3: 1 fields, expected 2 (a ... b)");
    assert_int_equal(vf__tsv_parse(a, "# only\n", 7, "e.tsv", &t, &err), VF_EFORMAT);
    assert_string_equal(err.msg, "e.tsv: no header line");
    vf_arena_close(a);
}

/* Writes `text` to dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char gpus_hdr[] = "id\tname\tvendor\tmarketed_gb\tsmi_mib\tusable_bytes\tusable_kind"
                               "\tbandwidth_gbps\tarch\tcc\tbf16\tfp8\tfp4\tsource\n";
static const char prices_hdr[] =
    "gpu\tcount\tprice_per_hour\tcurrency\tbilling\tkind\tas_of\tprovider\tsource\n";

/* A gpus.tsv of one card whose optional column col holds value: refused, with the line. */
static void bad_speed_cell(const char *dir, const char *col, const char *value)
{
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    char text[1024], want[128];
    snprintf(text, sizeof text,
             "id\tname\tvendor\tmarketed_gb\tsmi_mib\tusable_bytes\tusable_kind\tbandwidth_gbps"
             "\tarch\tcc\tbf16\tfp8\tfp4\t%s\tsource\nx\tX 24 GB\tNVIDIA\t24\t24564"
             "\t25393364992\tmeasured\t1\tAda\t8.9\tyes\tyes\tno\t%s\tme\n",
             col, value);
    put(dir, "gpus.tsv", text);
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    snprintf(want, sizeof want, "gpus.tsv:2: column '%s' is '%s'", col, value);
    assert_non_null(strstr(err.msg, want));
}

static void corrupt_data_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/vf-data-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char models[600];
    snprintf(models, sizeof models, "%s/models", dir);
    mkdir(models, 0700);
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    char text[2048];

    /* a usable total larger than the card */
    snprintf(text, sizeof text,
             "%sx\tX 24 GB\tNVIDIA\t24\t24564\t99999999999\tmeasured\t1\tAda"
             "\t8.9\tyes\tyes\tno\tme\n",
             gpus_hdr);
    put(dir, "gpus.tsv", text);
    put(dir, "prices.tsv", prices_hdr);
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "gpus.tsv:2: column 'usable_bytes' is '99999999999'"));
    assert_non_null(strstr(err.msg, dir));

    /* an optional speed column with a bad figure (issue 23); an SM count of 0 (unknown is
     * '?') and one that is not whole */
    bad_speed_cell(dir, "tflops_fp8", "lots");
    bad_speed_cell(dir, "sms", "0");
    bad_speed_cell(dir, "sms", "128.5");

    /* a price row for a card that does not exist, on line 3 after a comment */
    snprintf(text, sizeof text,
             "%sx\tX 24 GB\tNVIDIA\t24\t24564\t25393364992\tmeasured\t1\tAda"
             "\t8.9\tyes\tyes\tno\tme\n",
             gpus_hdr);
    put(dir, "gpus.tsv", text);
    char good_gpus[2048];
    memcpy(good_gpus, text, sizeof good_gpus);
    snprintf(text, sizeof text, "%s# ours\ny\t1\t0.5\tEUR\tminute\ton-demand\t2026-11\tus\tme\n",
             prices_hdr);
    put(dir, "prices.tsv", text);
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "prices.tsv:3: column 'gpu' is 'y', expected a card id"));

    /* the same card id twice, a card between them */
    snprintf(text, sizeof text,
             "%sx\tX\tNVIDIA\t24\t24564\t25393364992\tmeasured\t1\tAda\t8.9\tyes\tyes\tno\tme\n"
             "z\tZ\tNVIDIA\t24\t24564\t25393364992\tmeasured\t1\tAda\t8.9\tyes\tyes\tno\tme\n"
             "x\tX2\tNVIDIA\t24\t24564\t25393364992\tmeasured\t1\tAda\t8.9\tyes\tyes\tno\tme\n",
             gpus_hdr);
    put(dir, "gpus.tsv", text);
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "gpus.tsv:4: column 'id' is 'x', expected an id not used"));
    put(dir, "gpus.tsv", good_gpus);

    /* a bad price */
    snprintf(text, sizeof text, "%sx\t1\tcheap\tEUR\tminute\ton-demand\t2026-11\tus\tme\n",
             prices_hdr);
    put(dir, "prices.tsv", text);
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "column 'price_per_hour' is 'cheap'"));

    /* models.tsv: a file outside models/ is refused with its line */
    snprintf(text, sizeof text, "%sx\t1\t0.5\tEUR\tminute\ton-demand\t2026-11\tus\tme\n",
             prices_hdr);
    put(dir, "prices.tsv", text);
    put(dir, "models.tsv",
        "id\talias\tname\ttask\tfile\tparams_ref\tsource\n"
        "me/tiny\ttiny\tTiny\tinfer\t../etc/passwd\t?\tme\n");
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "models.tsv:2: column 'file' is '../etc/passwd'"));

    /* two rows with one alias */
    put(dir, "models.tsv",
        "id\talias\tname\ttask\tfile\tparams_ref\tsource\n"
        "me/tiny\ttiny\tTiny\tinfer\tmodels/bad.json\t?\tme\n"
        "me/other\ttiny\tOther\tinfer\tmodels/bad.json\t?\tme\n");
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "models.tsv:3: model 'tiny' is also on line 2"));

    /* ids compare without case (the lookup does): a second row of ME/Tiny is a duplicate,
     * found after rows in between (the hash set, not the row before) */
    put(dir, "models.tsv",
        "id\talias\tname\ttask\tfile\tparams_ref\tsource\n"
        "me/tiny\t\tTiny\tinfer\tmodels/bad.json\t?\tme\n"
        "me/mid\t\tMid\tinfer\tmodels/bad.json\t?\tme\n"
        "ME/Tiny\t\tTiny\tinfer\tmodels/bad.json\t?\tme\n");
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "models.tsv:4: model 'ME/Tiny' is also on line 2"));

    /* a model file that is not JSON: the catalog opens; resolving it names the file and line */
    put(dir, "models.tsv",
        "id\talias\tname\ttask\tfile\tparams_ref\tsource\n"
        "me/tiny\ttiny\tTiny\tinfer\tmodels/bad.json\t?\tme\n");
    put(models, "bad.json", "{\n  \"model_type\": [\n");
    assert_int_equal(vf_catalog_open(&c, dir, &err), VF_OK);
    assert_u64(c->n_gpus, 1);
    assert_string_equal(c->models[0].id, "me/tiny");
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    assert_int_equal(vf_model_resolve(a, c, "tiny", &m, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "models/bad.json"));
    assert_non_null(strstr(err.msg, "line 3"));
    vf_arena_close(a);
    vf_catalog_close(c);

    /* a data dir that is not there is an error naming it (issue 26: a file it lacks is the
     * built-in one, a folder it lacks is a mistake) */
    assert_int_equal(vf_catalog_open(&c, "/nonexistent/dir", &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "data dir '/nonexistent/dir'"));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void fake_gpus(void **state)
{
    (void)state;
    char path[] = "/tmp/vf-fake-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    FILE *f = fopen(path, "w");
    fputs("kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n"
          "gpu\t0\tNVIDIA GeForce RTX 4090\t24564MiB\t21540MiB\t97\t-\t-\n"
          "proc\t0\tpython\t-\t20100MiB\t-\t1234\tpython train.py\n"
          "gpu\t1\tNVIDIA GeForce RTX 4090\t24564MiB\t400MiB\t0\t-\t-\n",
          f);
    fclose(f);
    setenv("VRAMFIT_GPU_BACKEND", "fake", 1);
    setenv("VRAMFIT_FAKE_GPUS", path, 1);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_gpu_snapshot s;
    struct vf_error err = {0};
    assert_int_equal(vf_gpu_snapshot(a, &s, &err), VF_OK);
    assert_u64(s.n_devs, 2);
    assert_string_equal(s.backend, "fake");
    assert_u64(s.devs[0].total_bytes, 24564ULL << 20);
    assert_u64(s.devs[0].free_bytes, (24564ULL - 21540) << 20);
    assert_u64(s.devs[0].n_procs, 1);
    assert_u64(s.devs[0].procs[0].pid, 1234);
    assert_u64(s.devs[0].procs[0].used_bytes, 20100ULL << 20);

    f = fopen(path, "w");
    fputs("kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n"
          "gpu\t0\tX\t24564MiB\t99999MiB\t1\t-\t-\n",
          f);
    fclose(f);
    assert_int_equal(vf_gpu_snapshot(a, &s, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, ":2: column 'used' is '99999MiB'"));

    setenv("VRAMFIT_GPU_BACKEND", "nvml-not-here", 1);
    assert_int_equal(vf_gpu_snapshot(a, &s, &err), VF_EINVAL);
    unsetenv("VRAMFIT_GPU_BACKEND");
    assert_int_equal(vf_gpu_snapshot(a, &s, &err), VF_ENODEV);
    unsetenv("VRAMFIT_FAKE_GPUS");
    vf_arena_close(a);
    unlink(path);
}

static void arena_limit(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(4096);
    assert_non_null(vf_arena_alloc(a, 1000));
    assert_null(vf_arena_alloc(a, 8192));
    assert_non_null(vf_arena_alloc(a, 1000));
    vf_arena_close(a);
    vf_arena_close(NULL);
}

/* An allocator that fails the n-th allocation and every one after it. */
static long budget;
static void *fail_malloc(size_t n, void *ud)
{
    (void)ud;
    return budget-- > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return budget-- > 0 ? realloc(p, n) : NULL;
}
static void std_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* Opening the catalog and estimating under failing allocations never crashes: it either
 * succeeds or says VF_ENOMEM. */
static void allocation_failures(void **state)
{
    (void)state;
    struct vf_allocator fa = {fail_malloc, fail_realloc, std_free, NULL};
    int ok = 0, nomem = 0;
    for (long n = 0; n < 80; n++) {
        budget = n;
        vf_set_allocator(&fa);
        struct vf_catalog *c = NULL;
        struct vf_error err = {0};
        enum vf_err rc = vf_catalog_open(&c, NULL, &err);
        struct vf_arena *a = rc ? NULL : vf_arena_open(0);
        if (!rc && a) {
            struct vf_model m;
            struct vf_estimate e;
            struct vf_workload w = {.ctx_tokens = 4096};
            rc = vf_model_resolve(a, c, "llama-3.1-8b", &m, &err);
            if (!rc)
                rc = vf_estimate(a, &m, &w, &e, &err);
        }
        vf_set_allocator(NULL);
        if (rc == VF_OK)
            ok++;
        else if (rc == VF_ENOMEM)
            nomem++;
        else if (!a && !rc)
            nomem++;
        else
            fail_msg("allocation failure %ld gave %s: %s", n, vf_err_name(rc), err.msg);
        vf_arena_close(a);
        vf_catalog_close(c);
    }
    assert_true(nomem > 0);
    assert_true(ok > 0);
}

static void errors(void **state)
{
    (void)state;
    assert_string_equal(vf_err_name(VF_EFORMAT), "FORMAT");
    assert_string_equal(vf_strerror(VF_ENOMEM), "out of memory");
    assert_string_equal(vf_err_name((enum vf_err)999), "UNKNOWN");
    struct vf_error err = {0};
    assert_int_equal(vf__errf(&err, VF_EIO, "cannot read '%s'", "x"), VF_EIO);
    vf__err_prefix(&err, "gguf");
    assert_string_equal(err.msg, "gguf: cannot read 'x'");
    assert_int_equal(vf__errf(NULL, VF_EIO, "ignored"), VF_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(embedded_counts),
        cmocka_unit_test(models_index),
        cmocka_unit_test(gpus_match_reference),
        cmocka_unit_test(usable_anchors),
        cmocka_unit_test(speed_columns),
        cmocka_unit_test(default_offers),
        cmocka_unit_test(catalog_parts),
        cmocka_unit_test(lookups),
        cmocka_unit_test(tsv_reader),
        cmocka_unit_test(corrupt_data_dir),
        cmocka_unit_test(fake_gpus),
        cmocka_unit_test(arena_limit),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
