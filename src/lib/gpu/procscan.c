/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procscan.c - who the GPU's processes are: name, command line and container of each PID the
 * backend reports, read from /proc under VRAMFIT_SYSROOT (tests point it at a fixture tree),
 * and what each likely holds (F-GPU-03). The NVIDIA driver reports host PIDs even inside a
 * container (NVIDIA/nvidia-docker#1483), where they do not exist: then the local processes
 * holding /dev/nvidia* are found through /proc/PID/fd, and when exactly one such process is
 * left for exactly one unknown PID they are matched, said as such (research
 * anchors-monitoring.md 4). Each process is also named as the application it is (ComfyUI, a
 * Jupyter kernel and its notebook, vLLM, Ollama, llama-server, a training script), for the
 * lists of smi and top and top's kill confirmation.
 */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PS_MAX_PIDS  4096
#define PS_MAX_FDS   4096
#define PS_MAX_BYTES 4096 /* of one /proc file */

/* The first bytes of SYSROOT/proc/PID/FILE, NUL-terminated; NULL when absent. */
static char *proc_file(struct vf_arena *a, uint32_t pid, const char *file, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/proc/%u/%s", vf__sysroot(), pid, file);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = vf_arena_alloc(a, PS_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, PS_MAX_BYTES, f) : 0;
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* A container id from the cgroup path (docker-<id>.scope, /docker/<id>, cri-containerd-,
 * crio-, libpod-): its first 12 hex digits, as docker ps shows them. */
static const char *container_of(struct vf_arena *a, const char *cgroup)
{
    static const char *const marks[] = {"docker-", "/docker/", "cri-containerd-",
                                        "crio-",   "libpod-",  "containerd/"};
    for (size_t i = 0; cgroup && i < sizeof marks / sizeof marks[0]; i++) {
        const char *p = strstr(cgroup, marks[i]);
        if (!p)
            continue;
        p += strlen(marks[i]);
        size_t n = strspn(p, "0123456789abcdef");
        if (n >= 12)
            return vf_arena_printf(a, "%.12s", p);
    }
    return NULL;
}

/* A Kubernetes pod's UID from a kubelet cgroup path: cgroupfs ".../kubepods/burstable/pod<UID>/..."
 * or systemd ".../kubepods-burstable-pod<UID with _ for ->.slice/..."; with dashes, as the API
 * server and kube_pod_info{uid} spell it. NULL outside a pod. */
static const char *pod_of(struct vf_arena *a, const char *cgroup)
{
    const char *k = cgroup ? strstr(cgroup, "kubepods") : NULL;
    /* "pod" followed by a UID (the "pods" of "kubepods" is not one) */
    for (const char *p = k ? strstr(k + 8, "pod") : NULL; p; p = strstr(p + 3, "pod")) {
        char uid[37] = "";
        size_t n = 0;
        for (; n < 36 && p[3 + n] && strchr("0123456789abcdef-_", p[3 + n]); n++)
            uid[n] = p[3 + n] == '_' ? '-' : p[3 + n];
        if (n == 36 && uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-')
            return vf_arena_printf(a, "%.36s", uid);
    }
    return NULL;
}

/* F-GPU-03: what the process likely holds, from its command line. */
static const char *hint_of(const char *cmd)
{
    if (!cmd)
        return NULL;
    if (strstr(cmd, "ipykernel") || strstr(cmd, "jupyter"))
        return "Jupyter kernel: PyTorch keeps its cache reserved while the kernel lives; "
               "restart the kernel (or torch.cuda.empty_cache()) to free it";
    if (strstr(cmd, "vllm"))
        return "vLLM reserves --gpu-memory-utilization (default 0.9) of the card at start, "
               "whatever the load";
    if (strstr(cmd, "ollama"))
        return "Ollama keeps a model loaded for OLLAMA_KEEP_ALIVE (5 min) after the last "
               "request; 'ollama stop MODEL' frees it";
    if (strstr(cmd, "llama-server") || strstr(cmd, "llama-cli"))
        return "llama.cpp: weights on the GPU + the KV cache of -c, held until it exits";
    if (strstr(cmd, "ComfyUI") || strstr(cmd, "comfyui"))
        return "ComfyUI keeps models loaded between runs; Manager > Unload Models frees them";
    if (strstr(cmd, "python"))
        return "PyTorch shows its cache as used: torch.cuda.memory_reserved() in the process";
    return NULL;
}

/* The notebook a Jupyter kernel runs: jupyter_server's session manager starts each kernel
 * with JPY_SESSION_NAME = the notebook's path (jupyter_server 2.x, services/sessions/
 * sessionmanager.py); its last path element, or NULL when the environment is not readable. */
static const char *notebook_of(struct vf_arena *a, uint32_t pid)
{
    size_t len = 0;
    char *env = pid ? proc_file(a, pid, "environ", &len) : NULL;
    static const char key[] = "JPY_SESSION_NAME=";
    if (!env)
        return NULL;
    for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
        if (strncmp(env + i, key, sizeof key - 1) || !env[i + sizeof key - 1])
            continue;
        const char *path = env + i + sizeof key - 1, *slash = strrchr(path, '/');
        return slash && slash[1] ? slash + 1 : path;
    }
    return NULL;
}

/* The script a Python command line runs: the last path element of its first `.py` word. */
static const char *script_of(struct vf_arena *a, const char *cmd)
{
    for (const char *w = cmd; w && *w; w += strcspn(w, " ")) {
        w += strspn(w, " ");
        size_t n = strcspn(w, " ");
        if (n > 3 && !strncmp(w + n - 3, ".py", 3)) {
            const char *base = w;
            for (size_t k = 0; k < n; k++)
                if (w[k] == '/')
                    base = w + k + 1;
            return vf_arena_printf(a, "%.*s", (int)(n - (size_t)(base - w)), base);
        }
    }
    return NULL;
}

/* F-GPU-03: the application a process is, from its command line (first match wins: ComfyUI
 * and Jupyter before the engines, as a notebook may import vllm); NULL when none is known. */
static const char *app_of(struct vf_arena *a, uint32_t pid, const char *cmd)
{
    if (!cmd)
        return NULL;
    if (strstr(cmd, "ComfyUI") || strstr(cmd, "comfyui"))
        return "ComfyUI";
    if (strstr(cmd, "ipykernel") || strstr(cmd, "jupyter")) {
        const char *nb = notebook_of(a, pid);
        return nb ? vf_arena_printf(a, "Jupyter kernel %s", nb) : "Jupyter kernel";
    }
    if (strstr(cmd, "vllm"))
        return "vLLM";
    if (strstr(cmd, "ollama"))
        return "Ollama";
    if (strstr(cmd, "llama-server") || strstr(cmd, "llama-cli"))
        return strstr(cmd, "llama-server") ? "llama-server" : "llama-cli";
    const char *py = script_of(a, cmd);
    bool launcher =
        strstr(cmd, "torchrun") || strstr(cmd, "accelerate launch") || strstr(cmd, "deepspeed");
    if (py && (launcher || strstr(py, "train") || strstr(py, "finetune")))
        return vf_arena_printf(a, "training script %s", py);
    if (py)
        return vf_arena_printf(a, "script %s", py);
    return launcher ? "training launcher" : NULL;
}

/* Does process pid hold a /dev/nvidia* file? */
static bool holds_nvidia(uint32_t pid)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/proc/%u/fd", vf__sysroot(), pid);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool yes = false;
    struct dirent *e;
    for (int n = 0; !yes && n < PS_MAX_FDS && (e = readdir(d)); n++) {
        char path[800], target[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t l = readlink(path, target, sizeof target - 1);
        if (l > 0) {
            target[l] = '\0';
            yes = !strncmp(target, "/dev/nvidia", 11);
        }
    }
    closedir(d);
    return yes;
}

/* Fills name, command line and container of p from /proc/pid; false when it is not here. */
static bool describe(struct vf_arena *a, struct vf_gpu_proc *p, uint32_t pid)
{
    char *comm = proc_file(a, pid, "comm", NULL);
    if (!comm)
        return false;
    comm[strcspn(comm, "\n")] = '\0';
    p->name = comm;
    size_t len = 0;
    char *cmd = proc_file(a, pid, "cmdline", &len);
    if (cmd && len) {
        for (size_t i = 0; i + 1 < len; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        p->cmdline = cmd;
    }
    const char *cgroup = proc_file(a, pid, "cgroup", NULL);
    p->container = container_of(a, cgroup);
    p->pod_uid = pod_of(a, cgroup);
    return true;
}

void vf__procscan(struct vf_arena *a, struct vf_gpu_snapshot *s)
{
    size_t unknown = 0;
    struct vf_gpu_proc *lost = NULL;
    for (size_t i = 0; i < s->n_devs; i++)
        for (size_t k = 0; k < s->devs[i].n_procs; k++) {
            struct vf_gpu_proc *p = &s->devs[i].procs[k];
            if (!p->name && !describe(a, p, p->pid)) {
                unknown++;
                lost = p;
            }
            p->hint = hint_of(p->cmdline ? p->cmdline : p->name);
            p->app = app_of(a, p->local_pid ? p->local_pid : p->pid, p->cmdline);
        }
    if (unknown != 1)
        return;
    /* one PID from another namespace: the one local GPU holder not yet listed is it */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/proc", vf__sysroot());
    DIR *d = opendir(dir);
    if (!d)
        return;
    uint32_t cand = 0, n_cand = 0;
    struct dirent *e;
    for (int n = 0; n < PS_MAX_PIDS && (e = readdir(d)); n++) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (*end || !pid || pid > UINT32_MAX || pid == (unsigned long)getpid())
            continue;
        bool listed = false;
        for (size_t i = 0; i < s->n_devs && !listed; i++)
            for (size_t k = 0; k < s->devs[i].n_procs && !listed; k++)
                listed = s->devs[i].procs[k].pid == pid && s->devs[i].procs[k].name;
        if (!listed && holds_nvidia((uint32_t)pid)) {
            cand = (uint32_t)pid;
            n_cand++;
        }
    }
    closedir(d);
    if (n_cand == 1 && describe(a, lost, cand)) {
        lost->local_pid = cand;
        lost->match = "the only process here holding /dev/nvidia* (the driver reports the "
                      "host's PID)";
        lost->hint = hint_of(lost->cmdline ? lost->cmdline : lost->name);
        lost->app = app_of(a, cand, lost->cmdline);
    }
}
