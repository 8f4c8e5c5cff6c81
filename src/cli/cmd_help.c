/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_help.c - `vramfit help [COMMAND]` and the text every `--help` prints.
 */
#include "cli.h"

#include <string.h>

static const char main_help[] =
    "vramfit - will it fit on the GPU, and what is the cheapest card it fits on?\n"
    "\n"
    "usage: vramfit COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  estimate MODEL [flags]   memory breakdown; with --gpu: fits or not, largest ctx/users\n"
    "  pick MODEL [flags]       every catalog offer that fits, cheapest first\n"
    "  inspect MODEL            what a model holds: architecture, parameters, weights, KV\n"
    "  catalog PART [--json]    PART models, gpus or prices (each offer and where it is from)\n"
    "  explain [LOG|-]          why a job ran out of GPU memory, and the fixes for its tool\n"
    "  serve [--listen A:P]     the web page and JSON API on this machine (127.0.0.1:8077)\n"
    "  smi [--json]             the GPUs, their memory and who holds it (even in containers)\n"
    "  top [-d S] [-n N]        the same, live (ncurses; CSV when not a terminal; --json)\n"
    "  run [flags] -- CMD       run CMD and measure its real GPU memory peak; explain an OOM\n"
    "  exporter [--follow LOG]  Prometheus /metrics: GPUs, processes, OOMs counted by cause\n"
    "  help [COMMAND|engines]   this text, a command's flags, or every engine's own flags\n"
    "\n"
    "MODEL is a catalog id or alias (meta-llama/Llama-3.1-8B-Instruct, llama-3.1-8b).\n"
    "exit codes: 0 yes/found, 1 error, 2 usage, 3 answered no (does not fit)\n"
    "environment: VRAMFIT_DATA_DIR (catalog files), VRAMFIT_GPU_BACKEND, VRAMFIT_FAKE_GPUS\n";

/* The flags only the command line has; the workload's come from the library's table. */
#define CLI_FLAGS                                                                               \
    "  --json                   machine-readable output (DESIGN section 8)\n"                   \
    "  --ascii                  no Unicode bars or symbols (so when the locale is not UTF-8)\n" \
    "  --data-dir DIR           read gpus.tsv, prices.tsv, models/ from DIR\n"

static const char estimate_intro[] =
    "usage: vramfit estimate MODEL [flags]\n"
    "\n"
    "The memory a workload needs, by component; with --gpu, whether it fits, the headroom,\n"
    "and the largest context and number of users that fit. An engine's own flags\n"
    "('vramfit help engines') select that engine.\n"
    "\n";
static const char estimate_outro[] =
    "\n"
    "exit: 0 fits (or no card given), 3 does not fit, 1 error, 2 usage\n"
    "example: vramfit estimate llama-3.1-8b --ctx 32k --users 4 --gpu rtx-4090\n";

static const char pick_intro[] =
    "usage: vramfit pick MODEL [flags]\n"
    "\n"
    "Every offer of the catalog (card x count) that fits the workload, cheapest first,\n"
    "with price per hour and per minute; what each cheaper card would need to fit.\n"
    "--gpus N keeps the offers of N cards.\n"
    "\n";
static const char pick_outro[] =
    "\n"
    "exit: 0 something fits, 3 nothing fits, 1 error, 2 usage\n"
    "example: vramfit pick llama-3.1-70b --quant Q4_K_M --ctx 32k --users 4 --hours 3\n";

static const char serve_help[] =
    "usage: vramfit serve [--listen HOST:PORT] [--public] [--allow-host NAME]\n"
    "                     [--cors-origin ORIGIN] [--data-dir DIR]\n"
    "\n"
    "Serves the VRAM selector and the OOM doctor (a web page) and the JSON API on\n"
    "http://127.0.0.1:8077/ - loopback only: other machines cannot reach it unless --listen\n"
    "names another address (0.0.0.0 for every interface). Port 0 picks a free port. The URL is\n"
    "the first line on stdout; one line per request on stderr; Ctrl-C or SIGTERM stops it.\n"
    "\n"
    "API (JSON, exactly what the CLI prints with --json for the same flags; the options are\n"
    "the CLI's without dashes, as query keys or the members of a JSON body with POST):\n"
    "  GET  /api/v1/estimate?model=M&ctx=32k&gpu=rtx-4090&...   vramfit estimate\n"
    "  POST /api/v1/estimate  {\"model\": \"M\", \"ctx\": \"32k\", ...}\n"
    "  GET  /api/v1/pick?model=M&...  (or POST a JSON body)     vramfit pick\n"
    "  POST /api/v1/explain?model=M  (the log as the body)      vramfit explain\n"
    "  GET  /api/v1/inspect?model=hf:ORG/NAME                   vramfit inspect\n"
    "  GET  /api/v1/models?q=llama   /api/v1/gpus               vramfit catalog\n"
    "  GET  /api/v1/version   /healthz\n"
    "Errors: {\"error\":{\"code\",\"message\"}} with status 400, 403, 404, 405, 413, 422, 502, "
    "503\n"
    "(500 only for a bug).\n"
    "Limits: bodies 1 MiB (explain: 16 MiB, streamed), 4096 connections, 10 s idle.\n"
    "Who may ask (docs/SECURITY.md): the Host must name this server (--allow-host adds a\n"
    "name); a cross-site Origin is refused unless --cors-origin names it; listening on\n"
    "another address than loopback needs --public.\n";

static const char exporter_help[] =
    "usage: vramfit exporter [--listen HOST:PORT] [--public] [--follow FILE...]\n"
    "                        [--oom-spool DIR] [--data-dir DIR]\n"
    "\n"
    "A Prometheus exporter (serve --metrics-only is the same) on http://127.0.0.1:9477/:\n"
    "  GET /metrics            the GPUs and their processes now (dcgm-exporter's labels gpu,\n"
    "                          UUID, modelName, Hostname), vramfit_oom_events_total{tool,cause},\n"
    "                          vramfit_build_info, vramfit_scrape_duration_seconds\n"
    "  GET /api/v1/oom/last    the last out-of-memory error counted, as explain --json prints it\n"
    "  GET /healthz\n"
    "The OOM counter is fed by the logs --follow names (read as tail -F reads them: rotation\n"
    "and truncation followed; what they held at the start is context, not counted) and by the\n"
    "files `vramfit run` and `vramfit explain --follow` leave in the --oom-spool folder\n"
    "(VRAMFIT_OOM_SPOOL) for each OOM they explain, once each, from the exporter's start.\n"
    "Other machines reach it only with --listen ADDRESS:PORT --public (docs/SECURITY.md).\n"
    "environment: NODE_NAME (the Hostname label; else the host name), VRAMFIT_OOM_SPOOL\n"
    "example: vramfit exporter --follow /var/log/vllm.log --oom-spool /run/vramfit/oom\n";

static const char smi_help[] =
    "usage: vramfit smi [--json] [--ascii]\n"
    "\n"
    "The GPUs (NVML, loaded at run time; VRAMFIT_NVML_LIB names another library), their\n"
    "memory with the driver's reservation apart, and every process holding memory: name,\n"
    "command line, container. Inside a container the driver reports the host's PIDs; the\n"
    "process here that holds /dev/nvidia* is matched to them when that is unambiguous.\n"
    "One line per GPU says who holds most and how to free it.\n"
    "environment: VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS=FILE (tests), VRAMFIT_SYSROOT\n"
    "exit: 0, or 1 with the reason when no GPU is found\n";

static const char top_help[] =
    "usage: vramfit top [-d SECONDS] [-n COUNT] [--plain | --json]\n"
    "\n"
    "The GPUs live: per GPU a memory bar and its history, the processes by memory (named as\n"
    "vramfit smi names them: the application and the command line). Keys: q quits, arrows\n"
    "select a process, k kills it after a y/n confirmation naming it. Not on a terminal, or\n"
    "with --plain: one CSV line per GPU per interval, the columns of nvidia-smi\n"
    "--query-gpu=memory.used,memory.total,utilization.gpu. --json: one snapshot per line\n"
    "(smi --json's document with a \"timestamp\" first).\n"
    "  -d SECONDS   refresh interval (default 1)\n"
    "  -n COUNT     stop after COUNT refreshes\n";

static const char run_help[] =
    "usage: vramfit run [--interval MS] [--device N] [--plot FILE.svg] [--csv FILE]\n"
    "                   [--report FILE] [--json] [--explain auto|off] [--no-wait] -- CMD ARGS...\n"
    "\n"
    "Runs CMD and samples what its whole process tree holds on the GPU (every 10 ms by\n"
    "default, four times as often while the memory moves), with the device's use before the\n"
    "start as the baseline. When CMD exits, the peak, when it happened, the headroom it left\n"
    "and a verdict go to stderr (--json: as JSON; --report FILE: into FILE). CMD's stdin,\n"
    "stdout and stderr pass through untouched; when it dies of an out-of-memory error the\n"
    "diagnosis and fixes follow its output.\n"
    "  --plot FILE.svg   the timeline: device and process tree, the card, the peak, the OOM\n"
    "  --csv FILE        the raw samples\n"
    "  --no-wait         return when CMD exits, without waiting for processes it left behind\n"
    "\n"
    "Signals: HUP, INT, QUIT, TERM, USR1, USR2, ALRM, WINCH, CONT and the real-time signals\n"
    "are forwarded to CMD's process group; TSTP (Ctrl-Z) stops CMD, then vramfit, and fg\n"
    "resumes both. SIGPIPE is ignored: if whatever reads vramfit's stderr goes away, CMD runs\n"
    "on and its status is still returned.\n"
    "Leftovers: when CMD exits while processes it started still hold its stderr (`sleep 60 &`),\n"
    "their output is relayed until they close it, nothing lost; the first SIGINT or SIGTERM is\n"
    "forwarded to them, a second one stops waiting and returns at once; --no-wait does not\n"
    "wait (their later stderr is lost).\n"
    "exit: CMD's exit status (128 + N for signal N, 127 when CMD is not found, 126 when it is\n"
    "found but cannot be executed), 1 when vramfit itself fails, 2 usage\n";

static const char inspect_help[] =
    "usage: vramfit inspect MODEL [--json] [--ascii] [--data-dir DIR]\n"
    "\n"
    "What a model holds: architecture (layers, heads, KV heads, MLA, experts, sliding and\n"
    "recurrent layers), parameters (total and active), weight bytes as stored, KV cache per\n"
    "token, context length, and where each number came from (exact, config, catalog).\n";

static const char explain_intro[] =
    "usage: vramfit explain [FILE|-] [--tool T] [--model M] [workload flags] [--json]\n"
    "       vramfit explain --follow FILE... [--oom-spool DIR] [flags as above]\n"
    "\n"
    "Reads a log (a file, or stdin for '-' or none; any size, streamed) and explains the last\n"
    "out-of-memory error: the figures of the message, the cause with its evidence, and the\n"
    "fixes for the tool, each with what it saves (estimated when the model is known: --model,\n"
    "and the workload flags for what the log does not show) and what it costs; last, the\n"
    "cheapest card that would fit.\n"
    "--follow watches the logs as tail -F does (rotation, truncation) and explains each new\n"
    "out-of-memory error as it is written, until Ctrl-C; with --oom-spool DIR (or\n"
    "VRAMFIT_OOM_SPOOL) each explanation is also left there for `vramfit exporter` to count.\n"
    "\n";
static const char explain_outro[] =
    "\n"
    "exit: 0 an error was found and explained, 3 none found, 1 error, 2 usage\n"
    "example: vramfit explain train.log --model llama-3.1-8b\n";

static const char catalog_help[] =
    "usage: vramfit catalog models|gpus|prices [--json] [--data-dir DIR]\n"
    "\n"
    "The built-in data: models (HF id and alias) or GPUs (nvidia-smi total, usable total\n"
    "as CUDA reports it, precision support) with their offers; prices: every offer and where\n"
    "it comes from. A --data-dir overlays the built-in catalog: a file it lacks is the built-in\n"
    "one; its prices.tsv adds offers, replacing the built-in offer of the same card, count,\n"
    "provider and kind.\n";

/* intro, the command line's flags, the options of the library's table for vfcmd, outro: made
 * once, kept to the exit */
static const char *with_options(const char *intro, unsigned vfcmd, const char *outro)
{
    static struct vf_arena *a;
    if (!a && !(a = vf_arena_open(0)))
        return NULL;
    const char *opts = vf_options_help(a, vfcmd);
    return opts ? vf_arena_printf(a, "%s%s%s%s", intro, CLI_FLAGS, opts, outro) : NULL;
}

bool cli_help_parts(const char *cmd, struct cli_help_parts *out)
{
    static const struct {
        const char *cmd;
        struct cli_help_parts parts;
    } parts[] = {
        {"estimate", {estimate_intro, CLI_FLAGS, VF_CMD_ESTIMATE, estimate_outro}},
        {"pick", {pick_intro, CLI_FLAGS, VF_CMD_PICK, pick_outro}},
        {"explain", {explain_intro, CLI_FLAGS, VF_CMD_EXPLAIN, explain_outro}},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!strcmp(parts[i].cmd, cmd)) {
            *out = parts[i].parts;
            return true;
        }
    return false;
}

const char *cli_help_text(const char *cmd)
{
    if (!cmd)
        return main_help;
    if (!strcmp(cmd, "estimate"))
        return with_options(estimate_intro, VF_CMD_ESTIMATE, estimate_outro);
    if (!strcmp(cmd, "pick"))
        return with_options(pick_intro, VF_CMD_PICK, pick_outro);
    if (!strcmp(cmd, "catalog"))
        return catalog_help;
    if (!strcmp(cmd, "inspect"))
        return inspect_help;
    if (!strcmp(cmd, "explain"))
        return with_options(explain_intro, VF_CMD_EXPLAIN, explain_outro);
    if (!strcmp(cmd, "serve"))
        return serve_help;
    if (!strcmp(cmd, "smi"))
        return smi_help;
    if (!strcmp(cmd, "exporter"))
        return exporter_help;
    if (!strcmp(cmd, "top"))
        return top_help;
    if (!strcmp(cmd, "run"))
        return run_help;
    if (!strcmp(cmd, "help"))
        return main_help;
    return NULL;
}

/* Every engine with the flags it takes in its own spelling. */
static int engines_help(void)
{
    size_t n;
    const struct vf_engine *const *all = vf_engines(&n);
    static const char *const task_names[] = {"infer", "train", "image", "video"};
    for (size_t i = 0; i < n; i++) {
        printf("%s%s%s  (", all[i]->name, *all[i]->version ? " " : "", all[i]->version);
        bool first = true;
        for (unsigned t = 0; t < 4; t++)
            if (all[i]->tasks & (1u << t)) {
                printf("%s%s", first ? "--task " : ", ", task_names[t]);
                first = false;
            }
        printf(")\n");
        for (const struct vf_engine_flag *f = all[i]->flags; f && f->name; f++)
            printf("  %s%s%s%s  %s\n", f->name, f->alias ? ", " : "", f->alias ? f->alias : "",
                   f->takes_value ? " X" : "", f->help ? f->help : "");
        /* issue 20: the releases modelled, each rule with the release it changed in */
        if (all[i]->rules && all[i]->rules[0].since)
            printf("  versions: --engine %s@VERSION, %s or newer (default %s):\n", all[i]->name,
                   all[i]->rules[0].since, all[i]->version);
        for (const struct vf_engine_rule *r = all[i]->rules; r && r->since; r++)
            printf("    from %s (%s): %s\n      source: %s\n", r->since, r->regime, r->rule,
                   r->source);
    }
    return fflush(stdout) == EOF ? EXIT_ERR : EXIT_YES;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2)
        return cli_print(main_help);
    if (!strcmp(argv[1], "engines"))
        return engines_help();
    if (!strcmp(argv[1], "--man") || !strcmp(argv[1], "--complete"))
        return cli_doc(argc - 1, argv + 1);
    const char *t = cli_help_text(argv[1]);
    if (!t) {
        cli_error("no help for '%s' (commands: estimate, pick, inspect, catalog, explain)",
                  argv[1]);
        return EXIT_USAGE;
    }
    return cli_print(t);
}
