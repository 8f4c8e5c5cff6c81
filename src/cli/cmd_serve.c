/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_serve.c - `vramfit serve ...` runs the server, a program of its own (vramfit-serve,
 * src/server/) that links the library and none of the CLI: found beside this executable,
 * else on PATH. Its arguments, standard streams and exit status are its own. `vramfit
 * exporter ...` runs it as `vramfit-serve --metrics-only ...` (DESIGN section 8).
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SERVER_NAME "vramfit-serve"

/* Runs vramfit-serve with argv[1..], `extra` (or NULL) first; returns only when it cannot. */
static int run_server(const char *cmd, int argc, char **argv, const char *extra)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text(cmd));
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        cli_error("out of memory");
        return EXIT_ERR;
    }
    int n = 0;
    args[n++] = SERVER_NAME;
    if (extra)
        args[n++] = (char *)extra;
    for (int i = 1; i < argc; i++)
        args[n++] = argv[i];
    /* beside this executable first: a build tree or an installed prefix */
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - sizeof SERVER_NAME - 1);
    if (len > 0) {
        self[len] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, SERVER_NAME);
            execv(self, args);
        }
    }
    execvp(SERVER_NAME, args);
    cli_error("cannot run %s (beside vramfit or on PATH): %s", SERVER_NAME, strerror(errno));
    free(args);
    return EXIT_ERR;
}

int cmd_serve(int argc, char **argv)
{
    return run_server("serve", argc, argv, NULL);
}

int cmd_exporter(int argc, char **argv)
{
    return run_server("exporter", argc, argv, "--metrics-only");
}
