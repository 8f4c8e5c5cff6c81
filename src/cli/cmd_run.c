/*
 * cmd_run.c - `vramfit run [flags] -- CMD ARGS...`: runs the command and measures what its
 * process tree really holds on the GPU over time (lib run.c), then reports the peak; when the
 * command dies of an OOM, explains it with the numbers just seen. The child gets stdin and
 * stdout untouched and its own process group (the terminal's foreground when stdin is one);
 * its stderr is passed through as it comes and kept, the last 1 MiB, for the OOM parser.
 * SIGINT, SIGTERM and SIGHUP are forwarded; vramfit exits with the child's status (128 + N
 * for a signal, 127 when the command cannot start).
 */
#define _GNU_SOURCE /* memmem */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_TAIL      ((size_t)1 << 20) /* stderr kept for the OOM parser */
#define RUN_MAX_SAMPL 200000            /* then every other sample is dropped */
#define RUN_TREE_CAP  1024

static volatile sig_atomic_t forward_sig;
static pid_t child_pgid;

static void on_signal(int sig)
{
    forward_sig = sig;
    if (child_pgid > 0)
        kill(-child_pgid, sig);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Writes all of buf to fd (the child's stderr, passed through). */
static void write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        buf += w;
        n -= (size_t)w;
    }
}

struct opts {
    double interval_ms;
    int device;
    const char *plot, *csv, *report;
    bool json, explain;
    char **cmd;
};

static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->interval_ms = 10;
    o->device = -1;
    o->explain = true;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        char *end;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return -1;
        if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--interval") && has) {
            o->interval_ms = strtod(argv[++i], &end);
            if (*end || o->interval_ms < 1 || o->interval_ms > 60000)
                return cli_usage("run", "--interval %s: expected milliseconds from 1 to 60000",
                                 argv[i]);
        } else if (!strcmp(a, "--device") && has) {
            long d = strtol(argv[++i], &end, 10);
            if (*end || d < 0 || d > 64)
                return cli_usage("run", "--device %s: expected a GPU index", argv[i]);
            o->device = (int)d;
        } else if (!strcmp(a, "--plot") && has) {
            o->plot = argv[++i];
        } else if (!strcmp(a, "--csv") && has) {
            o->csv = argv[++i];
        } else if (!strcmp(a, "--report") && has) {
            o->report = argv[++i];
        } else if (!strcmp(a, "--explain") && has) {
            const char *v = argv[++i];
            if (strcmp(v, "auto") && strcmp(v, "off"))
                return cli_usage("run", "--explain %s: expected auto or off", v);
            o->explain = !strcmp(v, "auto");
        } else {
            return cli_usage("run", "unexpected '%s' (vramfit run [flags] -- CMD ARGS...)", a);
        }
    }
    if (i + 1 >= argc)
        return cli_usage("run", "no command: vramfit run [flags] -- CMD ARGS...");
    o->cmd = argv + i + 1;
    return 0;
}

/* Device used memory of one snapshot (the device, or every device summed). */
static uint64_t device_used(const struct vf_gpu_snapshot *s, int device, uint64_t *total,
                            const char **name)
{
    uint64_t u = 0, t = 0;
    for (size_t g = 0; g < s->n_devs; g++)
        if (device < 0 || s->devs[g].index == (uint32_t)device) {
            u = u + s->devs[g].used_bytes;
            t = t + s->devs[g].total_bytes;
            if (name && !*name)
                *name = s->devs[g].name;
        }
    if (total)
        *total = t;
    return u;
}

/* Writes text to path; false with a message on failure. */
static bool save(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || !text || fputs(text, f) == EOF) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        if (f)
            fclose(f);
        return false;
    }
    return fclose(f) == 0;
}

int cmd_run(int argc, char **argv)
{
    struct opts o;
    int prc = parse(argc, argv, &o);
    if (prc < 0)
        return cli_print(cli_help_text("run"));
    if (prc)
        return prc;

    /* the baseline: the device before the command starts */
    struct vf_arena *a = vf_arena_open(0);
    if (!a)
        return EXIT_ERR;
    struct vf_gpu_snapshot s0;
    struct vf_error err = {0};
    bool gpu = !vf_gpu_snapshot(a, &s0, &err);
    uint64_t total = 0;
    const char *gpu_name = NULL;
    uint64_t baseline = gpu ? device_used(&s0, o.device, &total, &gpu_name) : 0;
    if (!gpu)
        fprintf(stderr, "vramfit run: %s: the command runs, nothing is measured\n", err.msg);

    int ep[2];
    if (pipe(ep)) {
        cli_error("pipe: %s", strerror(errno));
        vf_arena_close(a);
        return EXIT_ERR;
    }
    fcntl(ep[0], F_SETFD, FD_CLOEXEC);
    bool tty = isatty(STDIN_FILENO);
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        cli_error("fork: %s", strerror(errno));
        vf_arena_close(a);
        return EXIT_ERR;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(ep[1], STDERR_FILENO);
        close(ep[1]);
        signal(SIGTTOU, SIG_DFL);
        execvp(o.cmd[0], o.cmd);
        fprintf(stderr, "vramfit run: cannot start '%s': %s\n", o.cmd[0], strerror(errno));
        _exit(127);
    }
    close(ep[1]);
    setpgid(pid, pid);
    child_pgid = pid;
    if (tty) { /* the child reads the terminal; we must not be stopped handing it over */
        signal(SIGTTOU, SIG_IGN);
        tcsetpgrp(STDIN_FILENO, pid);
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    char *tail = malloc(RUN_TAIL);
    size_t tail_len = 0;
    struct vf_run_sample *smp = NULL;
    size_t n = 0, cap = 0, stride = 1, skipped = 0;
    double next = 0, oom_ms = -1;
    bool open_err = true, done = false;
    int status = 0;
    uint32_t tree[RUN_TREE_CAP];
    while (open_err || !done) {
        double now = now_ms() - t0;
        int wait_ms = done ? 100 : (int)(next > now ? next - now : 0);
        struct pollfd pf = {.fd = ep[0], .events = POLLIN};
        int r = open_err ? poll(&pf, 1, wait_ms) : (usleep((useconds_t)wait_ms * 1000), 0);
        if (r > 0) {
            char buf[65536];
            ssize_t got = read(ep[0], buf, sizeof buf);
            if (got > 0) {
                write_all(STDERR_FILENO, buf, (size_t)got);
                if (tail) { /* the last RUN_TAIL bytes (a read is smaller than that) */
                    size_t g = (size_t)got;
                    if (tail_len + g > RUN_TAIL) {
                        size_t drop = tail_len + g - RUN_TAIL;
                        memmove(tail, tail + drop, tail_len - drop);
                        tail_len -= drop;
                    }
                    memcpy(tail + tail_len, buf, g);
                    tail_len += g;
                }
                if (oom_ms < 0 && memmem(buf, (size_t)got, "out of memory", 13))
                    oom_ms = now_ms() - t0;
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                open_err = false;
            }
        }
        if (!done) {
            int st;
            pid_t w = waitpid(pid, &st, WNOHANG);
            if (w == pid) {
                done = true;
                status = st;
            }
        }
        now = now_ms() - t0;
        if (gpu && !done && now >= next) { /* F-RUN-02: one sample of the tree */
            struct vf_arena *sa_ = vf_arena_open(0);
            struct vf_gpu_snapshot s;
            if (sa_ && !vf_gpu_snapshot(sa_, &s, NULL) && ++skipped >= stride) {
                skipped = 0;
                size_t nt = vf_run_tree((uint32_t)pid, tree, RUN_TREE_CAP);
                if (n == cap) {
                    if (cap >= RUN_MAX_SAMPL) { /* keep every other sample, sample half as often */
                        for (size_t i = 0; i < n / 2; i++)
                            smp[i] = smp[2 * i];
                        n /= 2;
                        stride *= 2;
                    } else {
                        size_t nc = cap ? cap * 2 : 1024;
                        struct vf_run_sample *p = realloc(smp, nc * sizeof *p);
                        if (p) {
                            smp = p;
                            cap = nc;
                        }
                    }
                }
                if (n < cap)
                    smp[n++] =
                        (struct vf_run_sample){now, device_used(&s, o.device, NULL, NULL), baseline,
                                               vf_run_tree_bytes(&s, tree, nt, o.device)};
            }
            vf_arena_close(sa_);
            /* adaptive: four times as often while the memory moves (at least every 2 ms) */
            bool moving = n >= 2 && (smp[n - 1].device_used != smp[n - 2].device_used ||
                                     smp[n - 1].tree_bytes != smp[n - 2].tree_bytes);
            double step = moving ? o.interval_ms / 4 : o.interval_ms;
            next = now + (step < 2 ? 2 : step);
        }
    }
    close(ep[0]);
    if (tty)
        tcsetpgrp(STDIN_FILENO, getpgrp());
    double dur = now_ms() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    /* the report */
    char b1[32], b2[32], b3[32];
    size_t pk = n ? vf_run_peak(smp, n) : 0;
    uint64_t peak = n ? smp[pk].tree_bytes : 0;
    uint64_t delta = n && smp[pk].device_used > baseline ? smp[pk].device_used - baseline : 0;
    if (peak < delta && n && !smp[pk].tree_bytes)
        peak = delta; /* the driver lists no processes: the device's growth */
    uint64_t used_at_peak = n ? smp[pk].device_used : baseline;
    char *text = NULL;
    if (o.json || o.report) {
        struct vf_run_report rep = {
            .argv = o.cmd,
            .exit_status = code,
            .duration_ms = dur,
            .gpu = gpu_name,
            .total_bytes = total,
            .baseline_bytes = baseline,
            .peak_tree_bytes = peak,
            .peak_device_delta_bytes = delta,
            .peak_at_ms = n ? smp[pk].t_ms : 0.0,
            .headroom_bytes = (int64_t)total - (int64_t)used_at_peak,
            .samples = n,
            .interval_ms = o.interval_ms * (double)stride,
            .oom_at_ms = oom_ms,
        };
        text = vf_render_run_json(a, &rep);
        if (!text)
            cli_error("run: cannot build the JSON report (out of memory)");
    }
    if (o.report)
        save(o.report, text);
    if (o.json && !o.report) {
        fputs(text ? text : "", stderr);
    } else if (!o.report) {
        fprintf(stderr, "\nvramfit run: '%s' %s %d after %.2f s\n", o.cmd[0],
                WIFEXITED(status) ? "exited" : "was killed by signal",
                WIFEXITED(status) ? code : code - 128, dur / 1000);
        if (!gpu) {
            fprintf(stderr, "  no GPU measured\n");
        } else {
            fprintf(stderr,
                    "  peak      %s held by the process tree at %.2f s; the device +%s over its "
                    "baseline of %s\n",
                    vf_format_bytes(b1, sizeof b1, peak, VF_FMT_IEC), n ? smp[pk].t_ms / 1000 : 0.0,
                    vf_format_bytes(b2, sizeof b2, delta, VF_FMT_IEC),
                    vf_format_bytes(b3, sizeof b3, baseline, VF_FMT_IEC));
            int64_t head = (int64_t)total - (int64_t)used_at_peak;
            unsigned pct = total ? (unsigned)(head > 0 ? (uint64_t)head * 100 / total : 0) : 0;
            fprintf(stderr, "  card      %s, %s: %s%s free at the peak (%u %% headroom)\n",
                    gpu_name ? gpu_name : "GPU", vf_format_bytes(b1, sizeof b1, total, VF_FMT_IEC),
                    head < 0 ? "-" : "",
                    vf_format_bytes(b2, sizeof b2, (uint64_t)(head < 0 ? -head : head), VF_FMT_IEC),
                    pct);
            fprintf(stderr, "  samples   %zu, every %.0f ms\n", n, o.interval_ms * (double)stride);
            /* tight: the smallest catalog card larger than this one, and its headroom */
            const char *bigger = "";
            struct vf_catalog *cat = pct < 10 ? cli_catalog(NULL) : NULL;
            const struct vf_gpu_spec *up = NULL;
            for (size_t i = 0; cat && i < cat->n_gpus; i++) {
                const struct vf_gpu_spec *g = &cat->gpus[i];
                if (g->usable_bytes != VF_UNKNOWN && g->usable_bytes > total + (1ULL << 30) &&
                    (!up || g->usable_bytes < up->usable_bytes))
                    up = g;
            }
            if (up)
                bigger = vf_arena_printf(a, "; a %u GB card (%s) would leave %llu %%",
                                         up->marketed_gb, up->name,
                                         (unsigned long long)((up->usable_bytes - used_at_peak) *
                                                              100 / up->usable_bytes));
            fprintf(stderr, "  verdict   peak %s of %s - %u %% headroom%s%s\n",
                    vf_format_bytes(b1, sizeof b1, peak, VF_FMT_IEC),
                    vf_format_bytes(b2, sizeof b2, total, VF_FMT_IEC), pct,
                    pct < 10 ? " (tight)" : "", bigger);
            vf_catalog_close(cat);
        }
    }
    if (o.plot && n)
        save(o.plot, vf_render_run_svg(a, smp, n, total, oom_ms));
    if (o.csv)
        save(o.csv, vf_render_run_csv(a, smp, n));

    /* F-OOM with the live numbers: the child died of an OOM */
    if (o.explain && code != 0 && tail && tail_len) {
        struct vf_catalog *cat = cli_catalog(NULL);
        struct vf_workload w;
        struct vf_explain x;
        vf_workload_init(&w, VF_CMD_EXPLAIN);
        if (!vf_answer_explain_text(a, cat, &w, tail, tail_len, &x, NULL) && x.n_events) {
            fprintf(stderr, "\nvramfit run: the command ran out of GPU memory%s\n",
                    n ? vf_arena_printf(a, " after a peak of %s",
                                        vf_format_bytes(b1, sizeof b1, peak, VF_FMT_IEC))
                      : "");
            if (n) { /* the live numbers: the last sample before it failed */
                const struct vf_run_sample *l = &smp[n - 1];
                uint64_t others =
                    l->device_used > l->tree_bytes ? l->device_used - l->tree_bytes : 0;
                fprintf(stderr,
                        "  last sample, %.2f s: the card %s of %s used; the command %s, "
                        "everything else %s (%s before it started)\n",
                        l->t_ms / 1000, vf_format_bytes(b1, sizeof b1, l->device_used, VF_FMT_IEC),
                        vf_format_bytes(b2, sizeof b2, total, VF_FMT_IEC),
                        vf_format_bytes(b3, sizeof b3, l->tree_bytes, VF_FMT_IEC),
                        vf_arena_printf(a, "%.2f GiB", (double)others / (1 << 30)),
                        vf_arena_printf(a, "%.2f GiB", (double)baseline / (1 << 30)));
            }
            fputs(vf_render_explain_text(a, &x, NULL), stderr);
            bool frag = x.diagnosis.cause && strstr(x.diagnosis.cause, "fragment");
            for (size_t i = 0; i < x.diagnosis.n_secondary && !frag; i++)
                frag = strstr(x.diagnosis.secondary[i], "fragment") != NULL;
            if (frag && !getenv("PYTORCH_CUDA_ALLOC_CONF")) {
                fprintf(stderr, "\nthe cache was fragmented and PYTORCH_CUDA_ALLOC_CONF is not "
                                "set; run it again as:\n  "
                                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vramfit run --");
                for (char **c = o.cmd; *c; c++)
                    fprintf(stderr, " %s", *c);
                fputc('\n', stderr);
            }
        }
        vf_catalog_close(cat);
    }
    free(tail);
    free(smp);
    vf_arena_close(a);
    return code;
}
