/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu.c - the GPU probe: a table of backends behind one ops struct: NVML (gpu_nvml.c, dlopen),
 * amdgpu (gpu_amdgpu.c, sysfs and DRM fdinfo) and the fake backend (gpu_fake.c, a TSV of
 * devices and processes for tests). The processes of a snapshot are then named from /proc
 * (procscan.c).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct vf__gpu_backend *const backends[] = {
    &vf__gpu_backend_nvml,
    &vf__gpu_backend_amdgpu,
    &vf__gpu_backend_fake,
};

enum vf_err vf_gpu_snapshot(struct vf_arena *a, struct vf_gpu_snapshot *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    const char *want = getenv("VRAMFIT_GPU_BACKEND");
    char reasons[VF_ERROR_MSG_MAX] = "";
    bool tried = false;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        const struct vf__gpu_backend *b = backends[i];
        if (want && *want && vf__strcasecmp(want, b->name))
            continue;
        if (!(want && *want) && b->explicit_only)
            continue;
        tried = true;
        struct vf_error e = {0};
        enum vf_err rc = b->snapshot(a, out, &e);
        if (!rc && out->n_devs) {
            out->backend = b->name;
            vf__procscan(a, out);
            return VF_OK;
        }
        if (rc && rc != VF_ENODEV) {
            if (err)
                *err = e;
            return rc;
        }
        size_t l = strlen(reasons);
        snprintf(reasons + l, sizeof reasons - l, "%s%s: %s", l ? "; " : "", b->name,
                 rc ? e.msg : "no devices");
    }
    if (!tried && want && *want)
        return vf__errf(
            err, VF_EINVAL,
            "unknown GPU backend '%s' in VRAMFIT_GPU_BACKEND (available: nvml, amdgpu, fake)",
            want ? want : "");
    if (!*reasons)
        snprintf(reasons, sizeof reasons,
                 "no GPU backend is built in yet besides 'fake' (VRAMFIT_GPU_BACKEND=fake)");
    return vf__errf(err, VF_ENODEV, "no GPU found: %s", reasons);
}
