/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_top.c - `vramfit top [-d SECONDS] [-n COUNT] [--plain | --json]`: the GPUs live. On a
 * terminal an ncurses view: per GPU a memory bar and its history, the processes sorted by memory
 * (names and containers from smi's snapshot), arrow keys to select one, `k` to kill it after a
 * confirmation, `q` to quit. Not on a terminal (or --plain): one CSV line per GPU per
 * interval, as `nvidia-smi --query-gpu=memory.used,memory.total,utilization.gpu --format=csv
 * -l 1` prints. --json: one JSON snapshot per line. -n stops after COUNT refreshes.
 *
 * libncursesw is dlopen()ed when the live view starts (issue 15): linked, it cost every
 * vramfit process ~0.25 ms of loading though only this view uses it. <curses.h> gives the
 * types and constants only (NCURSES_NOMACROS: no curses macro hides a call); no curses
 * symbol is referenced at link time.
 */
#include "cli.h"

#define NCURSES_NOMACROS
#include <curses.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOP_HISTORY  60 /* samples of memory history per GPU */
#define TOP_MAX_GPUS 16
#define TOP_MAX_ROWS 256

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t) && errno == EINTR && !stop) {
    }
}

/* --plain: CSV rows, nvidia-smi's columns. */
static int plain(double interval, long count)
{
    printf("timestamp, index, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%%]\n");
    for (long i = 0; !stop && (count <= 0 || i < count); i++) {
        struct vf_arena *a = vf_arena_open(0);
        struct vf_gpu_snapshot s;
        struct vf_error err = {0};
        if (!a || vf_gpu_snapshot(a, &s, &err)) {
            cli_error("%s", a ? err.msg : "out of memory");
            vf_arena_close(a);
            return EXIT_ERR;
        }
        char ts[32];
        time_t now = time(NULL);
        strftime(ts, sizeof ts, "%Y/%m/%d %H:%M:%S", localtime(&now));
        for (size_t g = 0; g < s.n_devs; g++) {
            const struct vf_gpu_dev *d = &s.devs[g];
            printf("%s, %u, %s, %llu MiB, %llu MiB, ", ts, d->index, d->name ? d->name : "?",
                   (unsigned long long)(d->used_bytes >> 20),
                   (unsigned long long)(d->total_bytes >> 20));
            if (d->util_percent == UINT32_MAX)
                printf("[N/A]\n");
            else
                printf("%u %%\n", d->util_percent);
        }
        fflush(stdout);
        vf_arena_close(a);
        if (count <= 0 || i + 1 < count)
            sleep_s(interval);
    }
    return EXIT_YES;
}

/* --json: one snapshot per line (JSON Lines), smi --json's document with a "timestamp" (UTC,
 * ISO 8601) first. The document's line breaks are all between tokens (a string holds none: JSON
 * escapes it), so dropping each with the indentation after it leaves the same document. */
static int json_lines(double interval, long count)
{
    for (long i = 0; !stop && (count <= 0 || i < count); i++) {
        struct vf_arena *a = vf_arena_open(0);
        struct vf_gpu_snapshot s;
        struct vf_error err = {0};
        if (!a || vf_gpu_snapshot(a, &s, &err)) {
            int rc = a ? cli_lib_error(&err) : EXIT_ERR;
            vf_arena_close(a);
            return rc == EXIT_NO ? EXIT_ERR : rc;
        }
        const char *doc = vf_render_gpus_json(a, &s);
        char ts[32];
        time_t now = time(NULL);
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        if (!doc || *doc != '{') {
            vf_arena_close(a);
            return cli_print(NULL);
        }
        printf("{\"timestamp\": \"%s\", ", ts);
        for (const char *p = doc + 1; *p; p++) {
            if (*p == '\n') {
                while (p[1] == ' ')
                    p++;
                continue;
            }
            putchar(*p);
        }
        putchar('\n');
        fflush(stdout);
        vf_arena_close(a);
        if (count <= 0 || i + 1 < count)
            sleep_s(interval);
    }
    return EXIT_YES;
}

/* ------------------------------------------------------------ ncurses via dlopen */

/* The curses calls of the live view; every one on stdscr (`scr`, read after initscr). */
static struct curses {
    WINDOW **scr;
    int *cols, *lines;
    WINDOW *(*initscr)(void);
    int (*endwin)(void);
    int (*cbreak)(void);
    int (*noecho)(void);
    int (*keypad)(WINDOW *, bool);
    int (*curs_set)(int);
    int (*halfdelay)(int);
    int (*werase)(WINDOW *);
    int (*wmove)(WINDOW *, int, int);
    int (*waddch)(WINDOW *, const chtype);
    int (*vw_printw)(WINDOW *, const char *, va_list);
    int (*wattron)(WINDOW *, int);
    int (*wattroff)(WINDOW *, int);
    int (*wclrtoeol)(WINDOW *);
    int (*wrefresh)(WINDOW *);
    int (*wgetch)(WINDOW *);
} cu;

/* Loads libncursesw (Debian: libncursesw6) into cu; false, with why, when it cannot. */
static bool curses_load(char *why, size_t cap)
{
    static const char *const sonames[] = {"libncursesw.so.6", "libncursesw.so.5", "libncursesw.so"};
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof sonames / sizeof sonames[0]; i++)
        lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, cap, "cannot load libncursesw.so.6 (apt-get install libncursesw6): %s",
                 dlerror());
        return false;
    }
    static const char *const names[] = {
        "stdscr",  "COLS",     "LINES",     "initscr",  "endwin", "cbreak", "noecho",
        "keypad",  "curs_set", "halfdelay", "werase",   "wmove",  "waddch", "vw_printw",
        "wattron", "wattroff", "wclrtoeol", "wrefresh", "wgetch",
    };
    void *sym[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(sym[i] = dlsym(lib, names[i]))) {
            snprintf(why, cap, "libncursesw.so.6 has no symbol %s", names[i]);
            return false;
        }
    /* POSIX guarantees that dlsym's object pointers convert to function pointers */
    size_t k = 0;
    cu.scr = (WINDOW **)sym[k++];
    cu.cols = (int *)sym[k++];
    cu.lines = (int *)sym[k++];
    cu.initscr = (WINDOW * (*)(void)) sym[k++];
    cu.endwin = (int (*)(void))sym[k++];
    cu.cbreak = (int (*)(void))sym[k++];
    cu.noecho = (int (*)(void))sym[k++];
    cu.keypad = (int (*)(WINDOW *, bool))sym[k++];
    cu.curs_set = (int (*)(int))sym[k++];
    cu.halfdelay = (int (*)(int))sym[k++];
    cu.werase = (int (*)(WINDOW *))sym[k++];
    cu.wmove = (int (*)(WINDOW *, int, int))sym[k++];
    cu.waddch = (int (*)(WINDOW *, const chtype))sym[k++];
    cu.vw_printw = (int (*)(WINDOW *, const char *, va_list))sym[k++];
    cu.wattron = (int (*)(WINDOW *, int))sym[k++];
    cu.wattroff = (int (*)(WINDOW *, int))sym[k++];
    cu.wclrtoeol = (int (*)(WINDOW *))sym[k++];
    cu.wrefresh = (int (*)(WINDOW *))sym[k++];
    cu.wgetch = (int (*)(WINDOW *))sym[k++];
    return true;
}

/* curses' mvprintw (printw when y is negative) and mvaddch on stdscr */
static void cu_printw(int y, int x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cu_printw(int y, int x, const char *fmt, ...)
{
    if (y >= 0 && cu.wmove(*cu.scr, y, x) == ERR)
        return;
    va_list ap;
    va_start(ap, fmt);
    cu.vw_printw(*cu.scr, fmt, ap);
    va_end(ap);
}

static void cu_addch(int y, int x, chtype c)
{
    if (cu.wmove(*cu.scr, y, x) != ERR)
        cu.waddch(*cu.scr, c);
}

struct row {
    uint32_t pid, kill_pid;
    uint64_t bytes;
    unsigned gpu;
    char name[64], container[16], cmd[96];
};

static int by_bytes(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    return a->bytes < b->bytes   ? 1
           : a->bytes > b->bytes ? -1
                                 : (a->pid > b->pid) - (a->pid < b->pid);
}

/* The history as a line of block heights (8 levels) scaled to the card. */
static void spark(int y, int x, const uint64_t *h, size_t n, size_t at, uint64_t total, int w)
{
    static const char levels[] = " .:-=+*#";
    for (int i = 0; i < w && (size_t)i < n; i++) {
        uint64_t v = h[(at + TOP_HISTORY - (size_t)w + (size_t)i) % TOP_HISTORY];
        int l = total ? (int)(v * 7 / total) : 0;
        cu_addch(y, x + i, (chtype)levels[l < 0 ? 0 : l > 7 ? 7 : l]);
    }
}

static int live(double interval, long count)
{
    static uint64_t hist[TOP_MAX_GPUS][TOP_HISTORY];
    size_t at = 0, n_hist = 0;
    int sel = 0;
    struct row rows[TOP_MAX_ROWS];
    cu.initscr();
    cu.cbreak();
    cu.noecho();
    cu.keypad(*cu.scr, TRUE);
    cu.curs_set(0);
    cu.halfdelay(interval < 0.1 ? 1 : interval > 25 ? 255 : (int)(interval * 10));
    char status[160];
    snprintf(status, sizeof status, "%s",
             cli_locale_ascii() ? "q quit - arrows select - k kill"
                                : "q quit · arrows select · k kill");
    bool bold = !getenv("NO_COLOR") || !*getenv("NO_COLOR"); /* no-color.org: no styling asked */
    for (long it = 0; !stop && (count <= 0 || it < count); it++) {
        struct vf_arena *a = vf_arena_open(0);
        struct vf_gpu_snapshot s;
        struct vf_error err = {0};
        cu.werase(*cu.scr);
        int y = 0, w = *cu.cols > 20 ? *cu.cols : 20;
        if (!a || vf_gpu_snapshot(a, &s, &err)) {
            cu_printw(0, 0, "vramfit top: %s", a ? err.msg : "out of memory");
            s.n_devs = 0;
        }
        size_t nr = 0;
        for (size_t g = 0; g < s.n_devs && g < TOP_MAX_GPUS; g++) {
            const struct vf_gpu_dev *d = &s.devs[g];
            hist[g][at] = d->used_bytes;
            char b1[32], b2[32];
            cu_printw(y++, 0, "GPU %u  %s  %s / %s%s", d->index, d->name ? d->name : "?",
                      vf_format_bytes(b1, sizeof b1, d->used_bytes, VF_FMT_IEC),
                      vf_format_bytes(b2, sizeof b2, d->total_bytes, VF_FMT_IEC),
                      d->util_percent != UINT32_MAX ? "" : "");
            if (d->util_percent != UINT32_MAX)
                cu_printw(-1, 0, "  %u %% busy", d->util_percent);
            int bw = w - 4 > 60 ? 60 : w - 4;
            int fill = d->total_bytes ? (int)(d->used_bytes * (uint64_t)bw / d->total_bytes) : 0;
            cu_addch(y, 0, '[');
            for (int i = 0; i < bw; i++)
                cu_addch(y, 1 + i, i < fill ? '#' : ' ');
            cu_addch(y++, 1 + bw, ']');
            cu_printw(y, 0, " ");
            spark(y++, 1, hist[g], n_hist + 1, at + 1, d->total_bytes, bw);
            for (size_t k = 0; k < d->n_procs && nr < TOP_MAX_ROWS; k++) {
                const struct vf_gpu_proc *p = &d->procs[k];
                struct row *r = &rows[nr++];
                memset(r, 0, sizeof *r);
                r->pid = p->pid;
                r->kill_pid = p->local_pid ? p->local_pid : p->name ? p->pid : 0;
                r->bytes = p->used_bytes == VF_UNKNOWN ? 0 : p->used_bytes;
                r->gpu = d->index;
                if (p->name && p->app) /* "ComfyUI, python": what it is, then its name */
                    snprintf(r->name, sizeof r->name, "%s, %s", p->app, p->name);
                else
                    snprintf(r->name, sizeof r->name, "%s", p->name ? p->name : "(not visible)");
                snprintf(r->cmd, sizeof r->cmd, "%s", p->cmdline ? p->cmdline : "");
                snprintf(r->container, sizeof r->container, "%s",
                         p->container ? p->container : "-");
            }
            y++;
        }
        qsort(rows, nr, sizeof rows[0], by_bytes);
        if (sel >= (int)nr)
            sel = nr ? (int)nr - 1 : 0;
        if (bold)
            cu.wattron(*cu.scr, A_BOLD);
        cu_printw(y++, 0, "%8s %4s %11s  %-40s %-12s %s", "PID", "GPU", "memory", "process",
                  "container", "command");
        cu.wattroff(*cu.scr, A_BOLD);
        for (size_t i = 0; i < nr && y < *cu.lines - 1; i++) {
            char b1[32];
            if ((int)i == sel)
                cu.wattron(*cu.scr, A_REVERSE);
            int room = w - 81; /* the command gets what the columns before it leave */
            cu_printw(y++, 0, "%8u %4u %11s  %-40.40s %-12s %.*s", rows[i].pid, rows[i].gpu,
                      vf_format_bytes(b1, sizeof b1, rows[i].bytes, VF_FMT_IEC), rows[i].name,
                      rows[i].container, room > 0 ? room : 0, rows[i].cmd);
            if ((int)i == sel)
                cu.wattroff(*cu.scr, A_REVERSE);
        }
        cu_printw(*cu.lines - 1, 0, "%s", status);
        cu.wrefresh(*cu.scr);
        vf_arena_close(a);
        at = (at + 1) % TOP_HISTORY;
        if (n_hist + 1 < TOP_HISTORY)
            n_hist++;
        int c = cu.wgetch(*cu.scr); /* waits up to the interval */
        if (c == 'q' || c == 'Q')
            break;
        if (c == KEY_UP && sel > 0)
            sel--;
        if (c == KEY_DOWN && sel + 1 < (int)nr)
            sel++;
        if ((c == 'k' || c == 'K') && nr) {
            const struct row *r = &rows[sel];
            if (!r->kill_pid) {
                snprintf(status, sizeof status, "PID %u is not visible here: cannot kill it",
                         r->pid);
                continue;
            }
            cu_printw(*cu.lines - 1, 0, "kill %u (%s)? y/n ", r->kill_pid, r->name);
            cu.wclrtoeol(*cu.scr);
            cu.wrefresh(*cu.scr);
            cu.cbreak();
            int ans = cu.wgetch(*cu.scr);
            cu.halfdelay(interval < 0.1 ? 1 : interval > 25 ? 255 : (int)(interval * 10));
            if (ans == 'y' || ans == 'Y')
                snprintf(status, sizeof status, "%s",
                         kill((pid_t)r->kill_pid, SIGTERM) ? strerror(errno) : "sent SIGTERM");
            else
                snprintf(status, sizeof status, "not killed");
        }
    }
    cu.endwin();
    return EXIT_YES;
}

int cmd_top(int argc, char **argv)
{
    double interval = 1.0;
    long count = 0;
    bool force_plain = false, json = false;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text("top"));
        if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            interval = strtod(argv[++i], &end);
            if (*end || interval < 0.05 || interval > 3600)
                return cli_usage("top", "-d %s: expected seconds from 0.05 to 3600", argv[i]);
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            count = strtol(argv[++i], &end, 10);
            if (*end || count < 1)
                return cli_usage("top", "-n %s: expected a count of 1 or more", argv[i]);
        } else if (!strcmp(argv[i], "--plain")) {
            force_plain = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            return cli_usage(
                "top", "unexpected '%s' (top [-d SECONDS] [-n COUNT] [--plain | --json])", argv[i]);
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (json)
        return json_lines(interval, count);
    if (force_plain || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
        return plain(interval, count);
    char why[256];
    if (!curses_load(why, sizeof why)) {
        fprintf(stderr, "vramfit: top: %s: plain output instead\n", why);
        return plain(interval, count);
    }
    return live(interval, count);
}
