/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_serve.c - `vramfit serve ...` runs the server, a program of its own (vramfit-serve,
 * src/server/) that links the library and none of the CLI: found beside this executable,
 * else on PATH. Its arguments, standard streams and exit status are its own.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SERVER_NAME "vramfit-serve"

int cmd_serve(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text("serve"));
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        cli_error("out of memory");
        return EXIT_ERR;
    }
    args[0] = SERVER_NAME;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    /* beside this executable first: a build tree or an installed prefix */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - sizeof SERVER_NAME - 1);
    if (n > 0) {
        self[n] = 0;
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
