/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_options.c - libFuzzer target of the option table (options.c) as the CLI and the HTTP
 * API drive it: the first byte picks the command, then each line is one option, "NAME=VALUE"
 * or a bare "NAME" (a flag), set with vf_workload_set (which suggests names for an unknown
 * one), then vf_workload_finish, the engine the workload names (vf_engine_for) and
 * vf_option_accepts. The strings stay alive for the whole run (the workload borrows them).
 */
#include "fuzz.h"

#define MAX_LINES 48

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned cmds[] = {VF_CMD_ESTIMATE, VF_CMD_PICK, VF_CMD_EXPLAIN};
    if (!size)
        return 0;
    char *text = fuzz_text(data + 1, size - 1);
    if (!text)
        return 0;
    char *lines[MAX_LINES];
    size_t n = fuzz_split(text, '\n', lines, MAX_LINES);
    struct vf_workload w;
    struct vf_error err;
    vf_workload_init(&w, cmds[data[0] % 3]);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        char *eq = strchr(lines[i], '=');
        if (eq)
            *eq = '\0';
        ok = !vf_workload_set(&w, lines[i], eq ? eq + 1 : NULL, &err);
        const struct vf_option *o = vf_option_find(lines[i], w.cmd, NULL, NULL);
        if (o && eq)
            (void)vf_option_accepts(&w, o, eq + 1);
    }
    if (ok && !vf_workload_finish(&w, &err))
        (void)vf_engine_for(&w, &err);
    free(text);
    return 0;
}
