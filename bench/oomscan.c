/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oomscan.c - reads a log in 1 MiB chunks through vf_oom_scan_feed and prints the event
 * count (bench/explain.sh times it against grep -c 'out of memory').
 * Usage: oomscan FILE
 */
#include "vramfit.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: oomscan FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    struct vf_arena *a = vf_arena_open(0);
    struct vf_oom_scan *s;
    struct vf_error err = {0};
    if (!a || vf_oom_scan_open(a, &s, &err)) {
        fprintf(stderr, "oomscan: %s\n", err.msg);
        return 1;
    }
    static char buf[1 << 20];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        vf_oom_scan_feed(s, buf, n, &err);
    fclose(f);
    const struct vf_oom_event *ev;
    size_t kept;
    uint64_t total;
    const struct vf_oom_context *ctx;
    vf_oom_scan_finish(s, &ev, &kept, &total, &ctx, &err);
    printf("%llu events", (unsigned long long)total);
    if (kept)
        printf(", last: %s (%s/%s) line %llu", ev[kept - 1].pattern, ev[kept - 1].tool,
               ev[kept - 1].source, (unsigned long long)ev[kept - 1].line);
    printf("\n");
    vf_arena_close(a);
    return 0;
}
