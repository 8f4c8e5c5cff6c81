/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool.c - the OOM spool `vramfit exporter --oom-spool DIR` counts (src/server/exporter.c):
 * `vramfit run` and `vramfit explain --follow` leave there one file per out-of-memory error
 * they explained, DIR/oom-<ns since 1970, 20 digits>-<pid>-<count>.json holding the explain
 * --json text. Written under a dot-name and renamed, so a reader never sees half a file; the
 * names sort by time. The folder is the operator's: nothing here removes old files.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *cli_spool_dir(const char *given)
{
    const char *env = getenv("VRAMFIT_OOM_SPOOL");
    return given && *given ? given : env && *env ? env : NULL;
}

int cli_spool_write(const char *dir, const char *json, uint64_t count)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    unsigned long long ns =
        (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
    char name[4200], tmp[4200];
    snprintf(name, sizeof name, "%s/oom-%020llu-%u-%llu.json", dir, ns, (unsigned)getpid(),
             (unsigned long long)count);
    snprintf(tmp, sizeof tmp, "%s/.oom-%020llu-%u.tmp", dir, ns, (unsigned)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fputs(json, f) != EOF;
    if (f && fclose(f))
        ok = false;
    if (!ok || rename(tmp, name)) {
        fprintf(stderr, "vramfit: cannot write the OOM spool file in '%s': %s\n", dir,
                strerror(errno));
        if (f)
            unlink(tmp);
        return -1;
    }
    return 0;
}
