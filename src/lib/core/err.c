/* SPDX-License-Identifier: Apache-2.0 */
/*
 * err.c - error codes, their names and messages (generated from VF_ERR_MAP), and the
 * helpers that fill a struct vf_error. Messages follow git's rules: lowercase, what failed
 * first, the subject quoted, then where and a hint.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const char *const err_names[] = {
#define NAME(name, msg) #name,
    VF_ERR_MAP(NAME)
#undef NAME
};

static const char *const err_msgs[] = {
#define MSG(name, msg) msg,
    VF_ERR_MAP(MSG)
#undef MSG
};

const char *vf_err_name(enum vf_err code)
{
    if ((unsigned)code >= VF_ERR__COUNT)
        return "UNKNOWN";
    return err_names[code];
}

const char *vf_strerror(enum vf_err code)
{
    if ((unsigned)code >= VF_ERR__COUNT)
        return "unknown error";
    return err_msgs[code];
}

enum vf_err vf__errf(struct vf_error *err, enum vf_err code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void vf__err_prefix(struct vf_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[VF_ERROR_MSG_MAX];
    char old[VF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", head, old);
}
