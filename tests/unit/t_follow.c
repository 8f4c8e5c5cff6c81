/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_follow.c - vf_follow (src/lib/answer/follow.c), the log follower of explain --follow and
 * exporter --follow, on real files in a temporary folder: what a file held when first opened
 * is context and never counted; a new OOM is counted once, explained with its tool and cause;
 * a line not ended yet waits for its end; truncation and rotation start over from the new
 * content; a file that does not exist yet is waited for. The OOM text is PyTorch 2.2's
 * message of tests/fixtures/oom/pytorch-2.2.log (its message line, without the documentation
 * link): one event each time it is written.
 */
#include "th.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char oom[] =
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a "
    "total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this "
    "process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by "
    "PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated.\n";

struct seen {
    uint64_t n, calls;
    char tool[32], cause[64];
};

static void on_hit(void *ud, const struct vf_follow_hit *h)
{
    struct seen *s = ud;
    s->n += h->n_new;
    s->calls++;
    snprintf(s->tool, sizeof s->tool, "%s", h->x->events[h->x->n_events - 1].tool);
    snprintf(s->cause, sizeof s->cause, "%s", h->x->diagnosis.cause);
}

static void append(const char *path, const char *mode, const char *text)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static uint64_t poll_count(struct vf_follow *f, struct seen *s)
{
    struct vf_workload w;
    vf_workload_init(&w, VF_CMD_EXPLAIN);
    struct vf_error err = {0};
    assert_int_equal(vf_follow_poll(f, th_cat, &w, on_hit, s, &err), VF_OK);
    return s->n;
}

static void follow_cases(void **state)
{
    (void)state;
    char dir[] = "/tmp/vramfit-follow-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], old[160];
    snprintf(path, sizeof path, "%s/app.log", dir);
    snprintf(old, sizeof old, "%s.1", path);
    const char *paths[] = {path};
    struct vf_follow *f;
    struct seen s = {0};
    assert_int_equal(vf_follow_open(&f, paths, 1, NULL), VF_OK);
    assert_u64(poll_count(f, &s), 0); /* not there yet: waited for */
    append(path, "w", "step 1\n");
    append(path, "a", oom); /* there at the first open: context, not counted */
    assert_u64(poll_count(f, &s), 0);
    append(path, "a", "step 2\n");
    assert_u64(poll_count(f, &s), 0);
    append(path, "a", oom);
    assert_u64(poll_count(f, &s), 1); /* a new one: counted once */
    assert_string_equal(s.tool, "pytorch");
    assert_true(s.cause[0] != '\0');
    assert_u64(poll_count(f, &s), 1); /* nothing new */
    /* a line without its end waits: the message is counted when its newline comes */
    append(path, "a", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2");
    assert_u64(poll_count(f, &s), 1);
    append(path, "a", strchr(oom, '2'));
    assert_u64(poll_count(f, &s), 2);
    /* truncated, then one OOM written: counted (the file is read again from its start) */
    append(path, "w", oom);
    assert_u64(poll_count(f, &s), 3);
    /* rotated: the old file moved away, a new one with one OOM */
    assert_int_equal(rename(path, old), 0);
    append(path, "w", oom);
    assert_u64(poll_count(f, &s), 4);
    assert_u64(poll_count(f, &s), 4);
    assert_u64(s.calls, 4);
    vf_follow_close(f);
    unlink(path);
    unlink(old);
    rmdir(dir);
    /* limits: none, or more than VF_FOLLOW_MAX_FILES */
    struct vf_error err = {0};
    assert_int_equal(vf_follow_open(&f, paths, 0, &err), VF_EUSAGE);
    assert_int_equal(vf_follow_open(&f, paths, VF_FOLLOW_MAX_FILES + 1, &err), VF_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(follow_cases)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
