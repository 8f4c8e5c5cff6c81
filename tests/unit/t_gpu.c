/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_gpu.c - the NVML backend through its real dlopen/dlsym path on a stub libnvidia-ml.so
 * (tests/helpers/stub_nvml.c, four symbol sets): memory v2 with the reservation apart and the
 * v1 fallback, the process-entry stride per symbol set (16, 24, 24 and 32 bytes: a wrong
 * stride scrambles every PID after the first), compute and graphics lists deduplicated, the
 * driver's error text, and the container case of procscan.c on a /proc fixture (F-GPU-01..03).
 */
#include "th.h"

#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

static char stub_dir[512];

static struct vf_gpu_snapshot snap_with(const char *variant, enum vf_err want)
{
    char path[700];
    snprintf(path, sizeof path, "%s/stub_nvml_%s.so", stub_dir, variant);
    setenv("VRAMFIT_NVML_LIB", path, 1);
    unsetenv("VRAMFIT_GPU_BACKEND");
    struct vf_gpu_snapshot s;
    struct vf_error err = {0};
    enum vf_err rc = vf_gpu_snapshot(th_arena, &s, &err);
    if (rc != want)
        fail_msg("%s: %d (%s), want %d", variant, rc, err.msg, want);
    return s;
}

static const struct vf_gpu_proc *proc(const struct vf_gpu_dev *d, uint32_t pid)
{
    for (size_t i = 0; i < d->n_procs; i++)
        if (d->procs[i].pid == pid)
            return &d->procs[i];
    fail_msg("no PID %u", pid);
    return NULL;
}

/*
 * F-GPU-01: nvmlDeviceGetMemoryInfo_v2 with version sizeof(nvmlMemory_v2_t) | 2 << 24 = 40 |
 * 0x02000000: total 24 GiB, used 10 GiB, reserved 400 MiB apart. The v1 stub has no _v2: used
 * is then 10 GiB + 400 MiB (v1 counts the reservation) and reserved is unknown.
 */
static void memory_v2_and_v1(void **state)
{
    (void)state;
    struct vf_gpu_snapshot s = snap_with("V2", VF_OK);
    assert_string_equal(s.backend, "nvml");
    assert_int_equal(s.n_devs, 1);
    assert_u64(s.devs[0].total_bytes, 24 * GIB);
    assert_u64(s.devs[0].used_bytes, 10 * GIB);
    assert_u64(s.devs[0].reserved_bytes, 400 * MIB);
    assert_int_equal(s.devs[0].util_percent, 37);
    assert_string_equal(s.devs[0].name, "NVIDIA GeForce RTX 4090");
    s = snap_with("V1", VF_OK);
    assert_u64(s.devs[0].used_bytes, 10 * GIB + 400 * MIB);
    assert_u64(s.devs[0].reserved_bytes, VF_UNKNOWN);
}

/*
 * F-GPU-02: the same three compute processes (4242: 8 GiB, 777: 1 GiB, 31337: 512 MiB) read
 * with every symbol set's stride; 777 is also a graphics process (900 MiB): one entry,
 * kind compute+graphics, the larger figure.
 */
static void process_strides(void **state)
{
    (void)state;
    static const char *const variants[] = {"V1", "V2", "V3", "CC"};
    for (size_t v = 0; v < 4; v++) {
        struct vf_gpu_snapshot s = snap_with(variants[v], VF_OK);
        const struct vf_gpu_dev *d = &s.devs[0];
        assert_int_equal(d->n_procs, 3);
        assert_u64(proc(d, 4242)->used_bytes, 8 * GIB);
        assert_u64(proc(d, 777)->used_bytes, 1 * GIB);
        assert_u64(proc(d, 31337)->used_bytes, 512 * MIB);
        assert_string_equal(proc(d, 777)->kind, "compute+graphics");
        assert_string_equal(proc(d, 4242)->kind, "compute");
    }
}

/* The driver's own error text, and no library at all: a one-line reason, never a crash. */
static void errors(void **state)
{
    (void)state;
    setenv("STUB_NVML_FAIL", "init", 1);
    struct vf_error err = {0};
    char path[700];
    snprintf(path, sizeof path, "%s/stub_nvml_V2.so", stub_dir);
    setenv("VRAMFIT_NVML_LIB", path, 1);
    struct vf_gpu_snapshot s;
    assert_int_equal(vf_gpu_snapshot(th_arena, &s, &err), VF_ENODEV);
    assert_non_null(strstr(err.msg, "Driver Not Loaded"));
    unsetenv("STUB_NVML_FAIL");
    setenv("VRAMFIT_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(vf_gpu_snapshot(th_arena, &s, &err), VF_ENODEV);
    assert_non_null(strstr(err.msg, "not found"));
}

/*
 * F-GPU-03: inside a container. The /proc fixture (tests/fixtures/sysroot/container) has PID
 * 4242 (python, Jupyter kernel, docker cgroup) and 777 (ollama serve, in a Kubernetes pod);
 * 31337 is not there:
 * the driver's host PID of the only other local process holding /dev/nvidia0, PID 12, which
 * is matched to it and said so. Names, container ids and hints come from /proc.
 */
static void container_names(void **state)
{
    (void)state;
    setenv("VRAMFIT_SYSROOT", "tests/fixtures/sysroot/container", 1);
    struct vf_gpu_snapshot s = snap_with("V3", VF_OK);
    const struct vf_gpu_dev *d = &s.devs[0];
    const struct vf_gpu_proc *p = proc(d, 4242);
    assert_string_equal(p->name, "python3");
    assert_non_null(strstr(p->cmdline, "ipykernel_launcher"));
    assert_string_equal(p->container, "3f2a9c1b7d4e");
    assert_non_null(strstr(p->hint, "Jupyter"));
    assert_non_null(strstr(proc(d, 777)->hint, "Ollama"));
    assert_null(p->pod_uid); /* a docker cgroup: no pod */
    /* 777's cgroup is a kubelet's under systemd (kubepods-burstable-pod<UID, _ for ->.slice,
     * then cri-containerd-<id>.scope): the pod UID with dashes, the container's first 12 */
    assert_string_equal(proc(d, 777)->pod_uid, "1c0e6b9a-54d2-4f11-9c3e-2b7a8d6f0e41");
    assert_string_equal(proc(d, 777)->container, "5e8d2c4a9b1f");
    const struct vf_gpu_proc *m = proc(d, 31337);
    assert_int_equal(m->local_pid, 12);
    assert_string_equal(m->name, "vllm");
    assert_non_null(m->match);
    unsetenv("VRAMFIT_SYSROOT");
}

/*
 * F-RUN-01: the process tree of this test with two children (real /proc): 3 processes. With
 * room for 16 it is whole (cut false); with room for 2 the third member is left out and the
 * cut is reported (vramfit run says so; it was silent before issue 17).
 */
static void run_tree_cut(void **state)
{
    (void)state;
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    uint32_t tree[16];
    bool cut16 = true, cut2 = false;
    size_t n16 = vf_run_tree((uint32_t)getpid(), tree, 16, &cut16);
    size_t n2 = vf_run_tree((uint32_t)getpid(), tree, 2, &cut2);
    for (int i = 0; i < 2; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    assert_u64(n16, 3);
    assert_false(cut16);
    assert_u64(n2, 2);
    assert_true(cut2);
}

/*
 * F-GPU-01: a unified-memory part: NVML says "not supported" for memory; the figures come
 * from the fixture's /proc/meminfo: MemTotal 128 GiB (134217728 kB), MemAvailable 100 GiB
 * (104857600 kB): used 28 GiB.
 */
static void unified_memory(void **state)
{
    (void)state;
    setenv("STUB_NVML_UMA", "1", 1);
    setenv("VRAMFIT_SYSROOT", "tests/fixtures/sysroot/uma", 1);
    struct vf_gpu_snapshot s = snap_with("V2", VF_OK);
    assert_true(s.devs[0].unified);
    assert_u64(s.devs[0].total_bytes, 128 * GIB);
    assert_u64(s.devs[0].used_bytes, 28 * GIB);
    unsetenv("STUB_NVML_UMA");
    unsetenv("VRAMFIT_SYSROOT");
}

/*
 * F-GPU-05: MIG. The stub's GPU is split into 2 instances of 12 GiB (8.5 GiB and 1 GiB used);
 * each is a device of the snapshot after its GPU, and the processes of its GPU instance (the
 * 24-byte entries' gpuInstanceId) are listed under it: 4242 and 31337 in instance 1, 777 in 2.
 */
static void mig_instances(void **state)
{
    (void)state;
    setenv("STUB_NVML_MIG", "1", 1);
    struct vf_gpu_snapshot s = snap_with("V3", VF_OK);
    assert_int_equal(s.n_devs, 3);
    assert_int_equal(s.devs[1].mig_parent, 1);
    assert_int_equal(s.devs[1].index, 0);
    assert_string_equal(s.devs[1].name, "NVIDIA A100 MIG 3g.40gb");
    assert_u64(s.devs[1].total_bytes, 12 * GIB);
    assert_u64(s.devs[1].used_bytes, 8 * GIB + 512 * MIB);
    assert_int_equal(s.devs[1].n_procs, 2);
    assert_int_equal(s.devs[2].n_procs, 1);
    assert_int_equal(s.devs[2].procs[0].pid, 777);
    unsetenv("STUB_NVML_MIG");
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        snprintf(self, sizeof self, "%s", argv[0]);
    else
        self[n] = '\0';
    snprintf(stub_dir, sizeof stub_dir, "%s", dirname(self));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_v2_and_v1), cmocka_unit_test(process_strides),
        cmocka_unit_test(errors),           cmocka_unit_test(container_names),
        cmocka_unit_test(unified_memory),   cmocka_unit_test(run_tree_cut),
        cmocka_unit_test(mig_instances),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
