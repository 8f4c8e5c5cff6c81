/* SPDX-License-Identifier: Apache-2.0 */
/*
 * interleave.c - times several commands as whole processes (fork + exec, output to
 * /dev/null), interleaved: round r runs command 1, 2, ..., k once each, N rounds, so that a
 * slow moment of a shared machine falls on every command alike. Prints per command the
 * median, the 10th and 90th percentile wall times in milliseconds and the ratio of medians
 * to the first command (the baseline, e.g. /bin/true), one line each, tab-separated:
 *   NAME  MEDIAN  P10  P90  RATIO
 * Usage: interleave N CMD ARGS... [-- CMD ARGS...]...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 32

struct cmd {
    char **argv;
    char name[512];
    double *t;
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run of argv; its wall time in ms, or a negative number when it failed. */
static double run(char **argv)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    /* vramfit exits 0 (yes) or 3 (no: does not fit); 1, 2 and 127 are errors */
    if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 3))
        return -1;
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: interleave N CMD ARGS... [-- CMD ARGS...]...\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > 100000)
        return 2;
    struct cmd c[MAX_CMDS];
    int k = 0;
    for (int i = 2; i < argc && k < MAX_CMDS;) {
        c[k].name[0] = 0;
        c[k].argv = &argv[i];
        while (i < argc && strcmp(argv[i], "--"))
            i++;
        if (i < argc)
            argv[i++] = NULL; /* ends this command's argv */
        for (char **a = c[k].argv; *a; a++)
            snprintf(c[k].name + strlen(c[k].name), sizeof c[k].name - strlen(c[k].name), "%s%s",
                     a == c[k].argv ? "" : " ", *a);
        c[k].t = malloc(sizeof *c[k].t * (size_t)n);
        if (!c[k].t)
            return 1;
        k++;
    }
    for (int r = 0; r < n; r++)
        for (int j = 0; j < k; j++)
            if ((c[j].t[r] = run(c[j].argv)) < 0) {
                fprintf(stderr, "interleave: '%s' failed\n", c[j].name);
                return 1;
            }
    double base = 0;
    for (int j = 0; j < k; j++) {
        qsort(c[j].t, (size_t)n, sizeof *c[j].t, cmp);
        double med = c[j].t[n / 2];
        if (j == 0)
            base = med;
        printf("%s\t%.2f\t%.2f\t%.2f\t%.2f\n", c[j].name, med, c[j].t[n / 10], c[j].t[(n * 9) / 10],
               base > 0 ? med / base : 0);
        free(c[j].t);
    }
    return 0;
}
