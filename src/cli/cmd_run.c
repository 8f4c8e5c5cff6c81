/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_run.c - `vramfit run [flags] -- CMD ARGS...`: runs the command and measures what its
 * process tree really holds on the GPU over time (lib run.c), then reports the peak; when the
 * command dies of an OOM, explains it with the numbers just seen. The child gets stdin and
 * stdout untouched and its own process group (the terminal's foreground when stdin is one);
 * its stderr is passed through as it comes and kept, the last 1 MiB, for the OOM parser.
 * Every signal a job is sent (HUP INT QUIT USR1 USR2 ALRM TERM WINCH CONT, the real-time
 * ones) is forwarded to the child's process group; TSTP stops the child, then vramfit.
 * SIGPIPE is ignored: when whatever reads our stderr goes away the child keeps running, its
 * output is still read (and dropped), and its status still returned. When the child exits
 * the report is made at once; output that processes it left behind still write into its
 * stderr is relayed until they close it (nothing lost), unless --no-wait, or until a second
 * SIGINT or SIGTERM. vramfit exits with the child's status (128 + N for a signal, 127 when
 * the command is not found, 126 when it cannot be executed).
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
#define RUN_TREE_CAP  1024              /* processes of the command's tree per sample */

/* What the signal handlers share with the loop: the child's group (0 before it exists), the
 * SIGINT and SIGTERM seen (the second one stops the wait for leftover output), and the write
 * end of a pipe that wakes the loop's poll (a signal, the child's exit). */
static pid_t child_pgid;
static volatile sig_atomic_t n_stops;
static int wake_wr = -1;

/* The signals forwarded to the child's group as they come: what a job is sent by a terminal,
 * a scheduler (SLURM's USR1/USR2 warnings) or a user. SIGTSTP is forwarded too and then
 * stops vramfit; each_signal() adds the real-time ones. Not forwarded: SIGPIPE
 * (ignored: about our own output), SIGCHLD, SIGTTIN/SIGTTOU, the faults. */
static const int forwarded[] = {SIGHUP,  SIGINT,  SIGQUIT,  SIGUSR1, SIGUSR2,
                                SIGALRM, SIGTERM, SIGWINCH, SIGCONT, SIGTSTP};

static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGINT || sig == SIGTERM)
        n_stops = n_stops + 1;
    if (child_pgid > 0 && sig != SIGCHLD)
        kill(-child_pgid, sig);
    if (sig == SIGTSTP) /* the child was told to stop: vramfit stops with it */
        raise(SIGSTOP);
    if (wake_wr >= 0)
        (void)!write(wake_wr, "", 1);
    errno = saved;
}

/* Calls fn(sig) for every signal vramfit forwards, then SIGCHLD when chld. */
static void each_signal(void (*fn)(int sig, void *ud), void *ud, bool chld)
{
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        fn(forwarded[i], ud);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        fn(sig, ud);
    if (chld)
        fn(SIGCHLD, ud);
}

static void catch_one(int sig, void *ud)
{
    (void)ud;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

static void add_one(int sig, void *ud)
{
    sigaddset(ud, sig);
}

static void default_one(int sig, void *ud)
{
    (void)ud;
    signal(sig, SIG_DFL);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Writes all of buf to fd (the child's stderr, passed through); false when fd is gone (EPIPE:
 * its reader closed it; SIGPIPE is ignored) or fails. */
static bool write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
            if (errno == EAGAIN) /* a non-blocking stderr that is full: wait for it */
                poll(&(struct pollfd){.fd = fd, .events = POLLOUT}, 1, 100);
            continue;
        }
        if (w <= 0)
            return false;
        buf += w;
        n -= (size_t)w;
    }
    return true;
}

struct opts {
    double interval_ms;
    int device;
    const char *plot, *csv, *report;
    bool json, explain, no_wait;
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
        } else if (!strcmp(a, "--no-wait")) {
            o->no_wait = true;
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

/* One run: the options, what was measured before the start, the child and its stderr, the
 * samples (malloc'd, grown by doubling up to RUN_MAX_SAMPL, then thinned). */
struct run {
    struct opts o;
    struct vf_arena *a;
    bool gpu;                 /* the device could be read before the start: samples are taken */
    uint64_t baseline, total; /* the device's used and total bytes before the start */
    const char *gpu_name;
    pid_t pid;       /* the child, leader of its own process group */
    int err_fd;      /* the read end of the child's stderr (non-blocking) */
    int wake_fd;     /* the read end of the pipe the signal handler writes */
    bool err_open;   /* until that pipe is closed */
    bool err_gone;   /* our stderr failed (EPIPE): the child's is read and dropped */
    bool tty;        /* stdin is a terminal, handed to the child while it runs */
    bool exited;     /* the child has exited (status set) */
    double t0;       /* now_ms() when the child started; sample times count from it */
    double dur;      /* ms from the start to the child's exit */
    size_t tree_cut; /* samples whose process tree was cut at a cap */
    char *tail;      /* the last RUN_TAIL bytes of the child's stderr (NULL: no memory) */
    size_t tail_len;
    struct vf_run_sample *smp;
    size_t n, cap, stride, skipped; /* samples kept; one snapshot of each stride kept */
    double next, oom_ms;            /* ms: the next sample; the first "out of memory" (-1: none) */
    int status;                     /* the child's, from waitpid */
    bool exec_failed; /* the command could not be started (127/126): no text verdict */
};

/* The baseline: the device before the command starts. Without a GPU the command still runs,
 * with nothing measured (said on stderr). */
static void measure_baseline(struct run *r)
{
    struct vf_gpu_snapshot s0;
    struct vf_error err = {0};
    r->gpu = !vf_gpu_snapshot(r->a, &s0, &err);
    r->baseline = r->gpu ? device_used(&s0, r->o.device, &r->total, &r->gpu_name) : 0;
    if (!r->gpu)
        fprintf(stderr, "vramfit run: %s: the command runs, nothing is measured\n", err.msg);
}

/* The child, after fork: its own process group, stderr into the pipe, the signals vramfit
 * catches or ignores back to their defaults and unblocked, then CMD. Exits 127 when CMD is
 * not found, 126 when it is found but cannot be executed (DESIGN section 8, as shells do). */
static void exec_child(const struct run *r, int err_wr, int exec_wr, const sigset_t *old)
{
    setpgid(0, 0);
    dup2(err_wr, STDERR_FILENO);
    close(err_wr);
    each_signal(default_one, NULL, true);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTTOU, SIG_DFL);
    sigprocmask(SIG_SETMASK, old, NULL);
    execvp(r->o.cmd[0], r->o.cmd);
    int e = errno;
    fprintf(stderr, "vramfit run: cannot %s '%s': %s\n",
            e == ENOENT || e == ENOTDIR ? "find" : "execute", r->o.cmd[0], strerror(e));
    /* tells the parent that exec failed (a successful exec closes exec_wr: close-on-exec) */
    ssize_t w = write(exec_wr, &e, sizeof e);
    (void)w;
    _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* Two pipes, both ends close-on-exec: ep for the child's stderr (its write end handed to the
 * child), wp to wake the loop. False with the message printed; nothing left open. */
static bool open_pipes(int ep[2], int wp[2])
{
    if (pipe(ep)) {
        cli_error("run: pipe: %s", strerror(errno));
        return false;
    }
    if (pipe(wp)) {
        cli_error("run: pipe: %s", strerror(errno));
        close(ep[0]);
        close(ep[1]);
        return false;
    }
    fcntl(ep[0], F_SETFD, FD_CLOEXEC);
    fcntl(ep[0], F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 2; i++) {
        fcntl(wp[i], F_SETFD, FD_CLOEXEC);
        fcntl(wp[i], F_SETFL, O_NONBLOCK);
    }
    return true;
}

/* Starts r->o.cmd in its own process group with its stderr into a pipe, hands it the terminal
 * when stdin is one, and forwards every signal of each_signal() to its group (caught from
 * before the fork, blocked across it so none is lost). SIGPIPE is ignored from now on.
 * Returns 0, or EXIT_ERR with the message printed and every descriptor closed (a pipe or the
 * fork failed). A command that cannot be executed is reported by the child (126, 127). */
static int start_child(struct run *r)
{
    int ep[2], wp[2], xp[2];
    if (!open_pipes(ep, wp))
        return EXIT_ERR;
    if (pipe(xp)) { /* exec's outcome: closed by a successful exec, an errno when it failed */
        cli_error("run: pipe: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            close(ep[i]);
            close(wp[i]);
        }
        return EXIT_ERR;
    }
    fcntl(xp[0], F_SETFD, FD_CLOEXEC);
    fcntl(xp[1], F_SETFD, FD_CLOEXEC);
    sigset_t block, old;
    sigemptyset(&block);
    each_signal(add_one, &block, true);
    sigprocmask(SIG_BLOCK, &block, &old);
    wake_wr = wp[1];
    each_signal(catch_one, NULL, true);
    signal(SIGPIPE, SIG_IGN);
    r->tty = isatty(STDIN_FILENO);
    r->t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0)
        exec_child(r, ep[1], xp[1], &old);
    close(ep[1]);
    close(xp[1]);
    if (pid > 0) {
        int e;
        ssize_t got;
        while ((got = read(xp[0], &e, sizeof e)) < 0 && errno == EINTR) {
        }
        r->exec_failed = got > 0;
    }
    close(xp[0]);
    if (pid < 0) {
        cli_error("run: cannot start '%s': fork: %s", r->o.cmd[0], strerror(errno));
        close(ep[0]);
        close(wp[0]);
        close(wp[1]);
        wake_wr = -1;
        sigprocmask(SIG_SETMASK, &old, NULL);
        return EXIT_ERR;
    }
    r->pid = pid;
    r->err_fd = ep[0];
    r->wake_fd = wp[0];
    r->err_open = true;
    setpgid(pid, pid);
    child_pgid = pid;
    if (r->tty) { /* the child reads the terminal; we must not be stopped handing it over */
        signal(SIGTTOU, SIG_IGN);
        tcsetpgrp(STDIN_FILENO, pid);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

/* Appends n bytes (n <= RUN_TAIL) to the kept tail, dropping its oldest bytes past RUN_TAIL. */
static void keep_tail(struct run *r, const char *buf, size_t n)
{
    if (!r->tail)
        return;
    if (r->tail_len + n > RUN_TAIL) {
        size_t drop = r->tail_len + n - RUN_TAIL;
        memmove(r->tail, r->tail + drop, r->tail_len - drop);
        r->tail_len -= drop;
    }
    memcpy(r->tail + r->tail_len, buf, n);
    r->tail_len += n;
}

/* Passes on one read of the child's stderr: to our stderr (until that fails), into the tail,
 * the time of its first "out of memory" noted. False when nothing was read (EOF closes it). */
static bool read_stderr(struct run *r)
{
    char buf[65536];
    ssize_t got = read(r->err_fd, buf, sizeof buf);
    if (got > 0) {
        if (!r->err_gone && !write_all(STDERR_FILENO, buf, (size_t)got))
            r->err_gone = true;
        keep_tail(r, buf, (size_t)got);
        if (r->oom_ms < 0 && memmem(buf, (size_t)got, "out of memory", 13))
            r->oom_ms = now_ms() - r->t0;
        return true;
    }
    if (got == 0 || (errno != EINTR && errno != EAGAIN))
        r->err_open = false;
    return false;
}

/* Waits up to wait_ms (-1: no limit) for the child's stderr or a wake-up (a signal, the
 * child's exit), then passes on what its stderr holds. */
static void pass_stderr(struct run *r, int wait_ms)
{
    struct pollfd pf[2] = {{.fd = r->wake_fd, .events = POLLIN},
                           {.fd = r->err_open ? r->err_fd : -1, .events = POLLIN}};
    if (poll(pf, 2, wait_ms) <= 0)
        return;
    char drain[64];
    while (read(r->wake_fd, drain, sizeof drain) > 0)
        ;
    if (pf[1].revents)
        read_stderr(r);
}

/* Keeps sample x. At RUN_MAX_SAMPL samples every other one is dropped and only one snapshot
 * in twice as many is kept from then on; when memory runs out, x is lost. */
static void add_sample(struct run *r, struct vf_run_sample x)
{
    if (r->n == r->cap) {
        if (r->cap >= RUN_MAX_SAMPL) {
            for (size_t i = 0; i < r->n / 2; i++)
                r->smp[i] = r->smp[2 * i];
            r->n /= 2;
            r->stride *= 2;
        } else {
            size_t nc = r->cap ? r->cap * 2 : 1024;
            struct vf_run_sample *p = realloc(r->smp, nc * sizeof *p);
            if (p) {
                r->smp = p;
                r->cap = nc;
            }
        }
    }
    if (r->n < r->cap)
        r->smp[r->n++] = x;
}

/* F-RUN-02: one sample at now (ms since the start): the device's use and what the child's
 * process tree holds; then when the next is due, four times as soon while the memory moves
 * (at least 2 ms apart). */
static void take_sample(struct run *r, double now)
{
    uint32_t tree[RUN_TREE_CAP];
    struct vf_arena *sa = vf_arena_open(0);
    struct vf_gpu_snapshot s;
    if (sa && !vf_gpu_snapshot(sa, &s, NULL) && ++r->skipped >= r->stride) {
        r->skipped = 0;
        bool cut;
        size_t nt = vf_run_tree((uint32_t)r->pid, tree, RUN_TREE_CAP, &cut);
        r->tree_cut += cut;
        add_sample(r, (struct vf_run_sample){now, device_used(&s, r->o.device, NULL, NULL),
                                             r->baseline,
                                             vf_run_tree_bytes(&s, tree, nt, r->o.device)});
    }
    vf_arena_close(sa);
    const struct vf_run_sample *smp = r->smp;
    size_t n = r->n;
    bool moving = n >= 2 && (smp[n - 1].device_used != smp[n - 2].device_used ||
                             smp[n - 1].tree_bytes != smp[n - 2].tree_bytes);
    double step = moving ? r->o.interval_ms / 4 : r->o.interval_ms;
    r->next = now + (step < 2 ? 2 : step);
}

/* The child stopped (a terminal's Ctrl-Z while it had the terminal): vramfit takes the
 * terminal back and stops too, so that the shell sees the job stopped; when continued (fg)
 * the child gets the terminal and SIGCONT. A child stopped for reading or writing the terminal
 * in the background (TTIN, TTOU) is only given the terminal back. */
static void child_stopped(struct run *r, int st)
{
    int sig = WSTOPSIG(st);
    if (sig != SIGTTIN && sig != SIGTTOU) {
        tcsetpgrp(STDIN_FILENO, getpgrp());
        raise(SIGSTOP);
    }
    tcsetpgrp(STDIN_FILENO, r->pid);
    kill(-r->pid, SIGCONT);
}

/* Until the child has exited: passes its stderr on, samples the GPU while it runs (when one
 * was found), collects its status; then reads what its stderr already holds. */
static void watch(struct run *r)
{
    while (!r->exited) {
        double now = now_ms() - r->t0;
        int wait = !r->gpu ? 1000 : r->next > now ? (int)(r->next - now) + 1 : 0;
        pass_stderr(r, wait);
        int st;
        pid_t w = waitpid(r->pid, &st, WNOHANG | (r->tty ? WUNTRACED : 0));
        if (w == r->pid && WIFSTOPPED(st)) {
            child_stopped(r, st);
        } else if (w == r->pid) {
            r->exited = true;
            r->status = st;
        }
        now = now_ms() - r->t0;
        if (r->gpu && !r->exited && now >= r->next)
            take_sample(r, now);
    }
    r->dur = now_ms() - r->t0;
    if (r->tty)
        tcsetpgrp(STDIN_FILENO, getpgrp());
    while (r->err_open && read_stderr(r))
        ;
}

/* After the child's exit and its report: the processes it left behind that still hold its
 * stderr are relayed until they close it, a second SIGINT or SIGTERM (the first is forwarded
 * to them), or at once with --no-wait. Says so on stderr when it waits. */
static void relay_rest(struct run *r)
{
    if (!r->err_open || r->o.no_wait)
        return;
    if (!(r->o.json && !r->o.report))
        fprintf(stderr,
                "vramfit run: '%s' has exited; processes it started still hold its stderr: "
                "relaying it until they close it (a second Ctrl-C or SIGTERM stops waiting; "
                "--no-wait does not wait)\n",
                r->o.cmd[0]);
    while (r->err_open && n_stops < 2)
        pass_stderr(r, -1);
}

/* The peak of a run (vf_run_peak's sample: where the process tree held most). */
struct peak {
    uint64_t tree;    /* the tree's bytes, or the device's growth when it lists no processes */
    uint64_t delta;   /* the device's growth over the baseline */
    uint64_t used;    /* the device's use (the baseline without samples) */
    double at_ms;     /* ms after the start */
    int64_t headroom; /* the card's total less its use at the peak */
};

/* The peak of r's samples; all 0 but used and headroom when there are none. */
static struct peak find_peak(const struct run *r)
{
    struct peak p = {.used = r->baseline};
    if (r->n) {
        const struct vf_run_sample *x = &r->smp[vf_run_peak(r->smp, r->n)];
        p.tree = x->tree_bytes;
        p.delta = x->device_used > r->baseline ? x->device_used - r->baseline : 0;
        if (p.tree < p.delta && !x->tree_bytes)
            p.tree = p.delta; /* the driver lists no processes: the device's growth */
        p.used = x->device_used;
        p.at_ms = x->t_ms;
    }
    p.headroom = (int64_t)r->total - (int64_t)p.used;
    return p;
}

/* The report as JSON (render_run.c); NULL with a message when memory runs out. */
static char *report_json(const struct run *r, int code, double dur, const struct peak *p)
{
    struct vf_run_report rep = {
        .argv = r->o.cmd,
        .exit_status = code,
        .duration_ms = dur,
        .gpu = r->gpu_name,
        .total_bytes = r->total,
        .baseline_bytes = r->baseline,
        .peak_tree_bytes = p->tree,
        .peak_device_delta_bytes = p->delta,
        .peak_at_ms = p->at_ms,
        .headroom_bytes = p->headroom,
        .samples = r->n,
        .interval_ms = r->o.interval_ms * (double)r->stride,
        .oom_at_ms = r->oom_ms,
        .tree_cut = r->tree_cut,
    };
    char *text = vf_render_run_json(r->a, &rep);
    if (!text)
        cli_error("run: cannot build the JSON report (out of memory)");
    return text;
}

/* When the headroom is tight (pct < 10): "; a 48 GB card (L40S) would leave 42 %", for the
 * smallest catalog card more than 1 GiB larger than this one; "" otherwise. */
static const char *bigger_card(const struct run *r, uint64_t used_at_peak, unsigned pct)
{
    const char *text = "";
    struct vf_catalog *cat = pct < 10 ? cli_catalog(NULL) : NULL;
    const struct vf_gpu_spec *up = NULL;
    for (size_t i = 0; cat && i < cat->n_gpus; i++) {
        const struct vf_gpu_spec *g = &cat->gpus[i];
        if (g->usable_bytes != VF_UNKNOWN && g->usable_bytes > r->total + (1ULL << 30) &&
            (!up || g->usable_bytes < up->usable_bytes))
            up = g;
    }
    if (up)
        text = vf_arena_printf(
            r->a, "; a %u GB card (%s) would leave %llu %%", up->marketed_gb, up->name,
            (unsigned long long)((up->usable_bytes - used_at_peak) * 100 / up->usable_bytes));
    vf_catalog_close(cat);
    return text;
}

/* The report as text on stderr: how the command ended, its peak against the baseline, the
 * card's headroom at the peak, the sampling, the verdict (with a bigger card when tight). */
static void report_text(const struct run *r, int code, double dur, const struct peak *p)
{
    char b1[32], b2[32], b3[32];
    bool exited = WIFEXITED(r->status);
    fprintf(stderr, "\nvramfit run: '%s' %s %d after %.2f s\n", r->o.cmd[0],
            exited ? "exited" : "was killed by signal", exited ? code : code - 128, dur / 1000);
    if (!r->gpu) {
        fprintf(stderr, "  no GPU measured\n");
        return;
    }
    fprintf(stderr,
            "  peak      %s held by the process tree at %.2f s; the device +%s over its "
            "baseline of %s\n",
            vf_format_bytes(b1, sizeof b1, p->tree, VF_FMT_IEC), p->at_ms / 1000,
            vf_format_bytes(b2, sizeof b2, p->delta, VF_FMT_IEC),
            vf_format_bytes(b3, sizeof b3, r->baseline, VF_FMT_IEC));
    int64_t head = p->headroom;
    uint64_t total = r->total;
    unsigned pct = total ? (unsigned)(head > 0 ? (uint64_t)head * 100 / total : 0) : 0;
    fprintf(stderr, "  card      %s, %s: %s%s free at the peak (%u %% headroom)\n",
            r->gpu_name ? r->gpu_name : "GPU", vf_format_bytes(b1, sizeof b1, total, VF_FMT_IEC),
            head < 0 ? "-" : "",
            vf_format_bytes(b2, sizeof b2, (uint64_t)(head < 0 ? -head : head), VF_FMT_IEC), pct);
    fprintf(stderr, "  samples   %zu, every %.0f ms\n", r->n, r->o.interval_ms * (double)r->stride);
    if (r->tree_cut)
        fprintf(stderr,
                "  note      in %zu samples the process tree was cut at %d processes (or /proc "
                "at %d): what it held may be short\n",
                r->tree_cut, RUN_TREE_CAP, VF_RUN_MAX_PROCS);
    const char *bigger = bigger_card(r, p->used, pct);
    fprintf(stderr, "  verdict   peak %s of %s - %u %% headroom%s%s\n",
            vf_format_bytes(b1, sizeof b1, p->tree, VF_FMT_IEC),
            vf_format_bytes(b2, sizeof b2, total, VF_FMT_IEC), pct, pct < 10 ? " (tight)" : "",
            bigger);
}

/* The report (--report FILE, --json on stderr, else text on stderr) and the files asked for:
 * --plot (SVG, when there are samples) and --csv. */
static void report(const struct run *r, int code, double dur, const struct peak *p)
{
    char *text = r->o.json || r->o.report ? report_json(r, code, dur, p) : NULL;
    if (r->o.report)
        save(r->o.report, text);
    if (r->o.json && !r->o.report)
        fputs(text ? text : "", stderr);
    else if (!r->o.report && !r->exec_failed) /* never started: the error only, no verdict */
        report_text(r, code, dur, p);
    if (r->o.plot && r->n)
        save(r->o.plot, vf_render_run_svg(r->a, r->smp, r->n, r->total, r->oom_ms));
    if (r->o.csv)
        save(r->o.csv, vf_render_run_csv(r->a, r->smp, r->n));
}

/* The live numbers of the last sample before the command failed: the card's use, the
 * command's, everyone else's, and the baseline. */
static void last_sample(const struct run *r)
{
    char b1[32], b2[32], b3[32];
    const struct vf_run_sample *l = &r->smp[r->n - 1];
    uint64_t others = l->device_used > l->tree_bytes ? l->device_used - l->tree_bytes : 0;
    fprintf(stderr,
            "  last sample, %.2f s: the card %s of %s used; the command %s, "
            "everything else %s (%s before it started)\n",
            l->t_ms / 1000, vf_format_bytes(b1, sizeof b1, l->device_used, VF_FMT_IEC),
            vf_format_bytes(b2, sizeof b2, r->total, VF_FMT_IEC),
            vf_format_bytes(b3, sizeof b3, l->tree_bytes, VF_FMT_IEC),
            vf_arena_printf(r->a, "%.2f GiB", (double)others / (1 << 30)),
            vf_arena_printf(r->a, "%.2f GiB", (double)r->baseline / (1 << 30)));
}

/* When the diagnosis names fragmentation and PYTORCH_CUDA_ALLOC_CONF is not set: the command
 * line that runs the command again with expandable segments. */
static void rerun_hint(const struct run *r, const struct vf_explain *x)
{
    bool frag = x->diagnosis.cause && strstr(x->diagnosis.cause, "fragment");
    for (size_t i = 0; i < x->diagnosis.n_secondary && !frag; i++)
        frag = strstr(x->diagnosis.secondary[i], "fragment") != NULL;
    if (!frag || getenv("PYTORCH_CUDA_ALLOC_CONF"))
        return;
    fprintf(stderr, "\nthe cache was fragmented and PYTORCH_CUDA_ALLOC_CONF is not "
                    "set; run it again as:\n  "
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vramfit run --");
    for (char **c = r->o.cmd; *c; c++)
        fprintf(stderr, " %s", *c);
    fputc('\n', stderr);
}

/* F-OOM with the live numbers: when the command failed (code != 0) and its stderr holds an
 * out-of-memory error, explains it (vramfit explain's text) after the peak and the last
 * sample. Nothing with --explain off. */
static void explain_oom(const struct run *r, int code, uint64_t peak)
{
    char b[32];
    if (!r->o.explain || code == 0 || !r->tail || !r->tail_len)
        return;
    struct vf_catalog *cat = cli_catalog(NULL);
    struct vf_workload w;
    struct vf_explain x;
    vf_workload_init(&w, VF_CMD_EXPLAIN);
    if (!vf_answer_explain_text(r->a, cat, &w, r->tail, r->tail_len, &x, NULL) && x.n_events) {
        fprintf(stderr, "\nvramfit run: the command ran out of GPU memory%s\n",
                r->n ? vf_arena_printf(r->a, " after a peak of %s",
                                       vf_format_bytes(b, sizeof b, peak, VF_FMT_IEC))
                     : "");
        if (r->n)
            last_sample(r);
        fputs(vf_render_explain_text(r->a, &x, NULL), stderr);
        rerun_hint(r, &x);
        /* `vramfit exporter --oom-spool DIR` counts it (README "Across a fleet") */
        const char *spool = cli_spool_dir(NULL);
        if (spool)
            cli_spool_write(spool, vf_render_explain_json(r->a, &x), x.n_total);
    }
    vf_catalog_close(cat);
}

int cmd_run(int argc, char **argv)
{
    struct run r = {.stride = 1, .oom_ms = -1};
    int prc = parse(argc, argv, &r.o);
    if (prc < 0)
        return cli_print(cli_help_text("run"));
    if (prc)
        return prc;
    if (!(r.a = cli_arena()))
        return EXIT_ERR;
    measure_baseline(&r);
    r.tail = malloc(RUN_TAIL);
    if (start_child(&r)) {
        free(r.tail);
        vf_arena_close(r.a);
        return EXIT_ERR;
    }
    watch(&r);
    int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status);
    struct peak p = find_peak(&r);
    report(&r, code, r.dur, &p);
    if (!r.exec_failed)
        explain_oom(&r, code, p.tree);
    relay_rest(&r);
    close(r.err_fd);
    free(r.tail);
    free(r.smp);
    vf_arena_close(r.a);
    return code;
}
