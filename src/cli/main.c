/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - the vramfit command: dispatches to cmd_<name>() and keeps the exit codes of
 * DESIGN section 8 (0 yes, 1 error, 2 usage, 3 answered no).
 */
#include "cli.h"
#include "version.h"

#include <locale.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    {"estimate", cmd_estimate}, {"pick", cmd_pick},         {"inspect", cmd_inspect},
    {"catalog", cmd_catalog},   {"explain", cmd_explain},   {"help", cmd_help},
    {"serve", cmd_serve},       {"smi", cmd_smi},           {"top", cmd_top},
    {"run", cmd_run},           {"exporter", cmd_exporter},
};

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "C");
    if (argc < 2) {
        fputs(cli_help_text(NULL), stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return cmd_help(argc - 1, argv + 1);
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("vramfit %s (commit %s, catalog %s)\n", VF_VERSION, VF_COMMIT, VF_CATALOG_DATE);
        return EXIT_YES;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            cli_cmd = commands[i].name;
            for (int k = 2; k < argc && strcmp(argv[k], "--"); k++)
                cli_json |= !strcmp(argv[k], "--json");
            return commands[i].fn(argc - 1, argv + 1);
        }
    /* a typo: the command within a third of its length (at least 2) edits, the nearest */
    const char *near = NULL;
    unsigned best = (unsigned)(strlen(cmd) / 3 > 2 ? strlen(cmd) / 3 : 2) + 1;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        unsigned d = vf_edit_distance(cmd, commands[i].name);
        if (d < best) {
            best = d;
            near = commands[i].name;
        }
    }
    for (int k = 2; k < argc && strcmp(argv[k], "--"); k++)
        cli_json |= !strcmp(argv[k], "--json");
    if (near)
        cli_bad("unknown command '%s' (did you mean %s? commands: estimate, pick, inspect, "
                "catalog, explain, serve, smi, top, run, exporter, help)",
                cmd, near);
    else
        cli_bad("unknown command '%s' (commands: estimate, pick, inspect, catalog, explain, "
                "serve, smi, top, run, exporter, help)",
                cmd);
    return EXIT_USAGE;
}
