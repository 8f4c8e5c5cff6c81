/*
 * timeit.c - runs a command N times as a whole process (fork + exec, output to /dev/null)
 * and prints the median, the 10th and 90th percentile wall times in milliseconds.
 * Usage: timeit N CMD ARGS...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: timeit N CMD ARGS...\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > 100000)
        return 2;
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return 1;
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int st;
        waitpid(pid, &st, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (!WIFEXITED(st) || WEXITSTATUS(st) == 127 || WEXITSTATUS(st) == 1 ||
            WEXITSTATUS(st) == 2) {
            fprintf(stderr, "timeit: '%s' failed (status %d)\n", argv[2], st);
            return 1;
        }
        t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    }
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%.2f %.2f %.2f\n", t[n / 2], t[n / 10], t[(n * 9) / 10]);
    free(t);
    return 0;
}
