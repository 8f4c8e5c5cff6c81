/* SPDX-License-Identifier: Apache-2.0 */
/*
 * units.c - the only code that parses or prints sizes, token counts and prices.
 *
 * Sizes: IEC suffixes (KiB, MiB, GiB, TiB; and the bare K, M, G, T that PyTorch and most
 * users mean as binary) are powers of 1024; SI suffixes (KB, MB, GB, TB) are powers of 1000.
 * Decimal fractions are computed in integers, exactly, and rounded half up to the byte.
 * Prices are integers in micro-units of their currency.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits "23.65 GiB" into integer digits, fraction digits and the suffix. */
struct num {
    uint64_t ip;         /* integer part */
    uint64_t frac;       /* fraction digits as an integer */
    uint64_t frac_scale; /* 10^(number of fraction digits) */
    const char *suffix;  /* after optional spaces */
};

static enum vf_err split_number(const char *s, const char *what, struct num *n,
                                struct vf_error *err)
{
    const char *p = s;
    if (!s || !*s)
        return vf__errf(err, VF_EINVAL, "empty %s", what);
    if (strlen(s) > VF_MAX_NUMBER_TEXT)
        return vf__errf(err, VF_ELIMIT, "%s '%.20s...' is too long", what, s);
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p) && *p != '.')
        return vf__errf(err, VF_EINVAL, "bad %s '%s': expected a number", what, s);
    n->ip = 0;
    n->frac = 0;
    n->frac_scale = 1;
    int digits = 0;
    for (; isdigit((unsigned char)*p); p++, digits++) {
        if (!vf__mul_u64(n->ip, 10, &n->ip) || !vf__add_u64(n->ip, (uint64_t)(*p - '0'), &n->ip))
            return vf__errf(err, VF_ERANGE, "%s '%s' is too large", what, s);
    }
    if (*p == '.') {
        p++;
        for (; isdigit((unsigned char)*p); p++, digits++) {
            if (n->frac_scale >= 1000000000000ULL)
                continue; /* more than 12 decimals: ignore the rest */
            n->frac = n->frac * 10 + (uint64_t)(*p - '0');
            n->frac_scale *= 10;
        }
    }
    if (!digits)
        return vf__errf(err, VF_EINVAL, "bad %s '%s': expected a number", what, s);
    while (*p == ' ')
        p++;
    n->suffix = p;
    return VF_OK;
}

/* ip.frac x mult, rounded half up; false on overflow */
static bool scale_exact(const struct num *n, uint64_t mult, uint64_t *out)
{
    uint64_t a, b;
    if (!vf__mul_u64(n->ip, mult, &a))
        return false;
    /* frac * mult / frac_scale without overflow: split mult */
    unsigned __int128 f = (unsigned __int128)n->frac * mult;
    f = (f + n->frac_scale / 2) / n->frac_scale;
    if (f > UINT64_MAX)
        return false;
    b = (uint64_t)f;
    /* UINT64_MAX is VF_UNKNOWN: a number that large reads as too large, never as unknown */
    return vf__add_u64(a, b, out) && *out != VF_UNKNOWN;
}

static const struct {
    const char *name;
    uint64_t mult;
} size_units[] = {
    {"", 1},
    {"b", 1},
    {"byte", 1},
    {"bytes", 1},
    {"k", 1ULL << 10},
    {"kib", 1ULL << 10},
    {"m", 1ULL << 20},
    {"mib", 1ULL << 20},
    {"g", 1ULL << 30},
    {"gib", 1ULL << 30},
    {"t", 1ULL << 40},
    {"tib", 1ULL << 40},
    {"kb", 1000ULL},
    {"mb", 1000000ULL},
    {"gb", 1000000000ULL},
    {"tb", 1000000000000ULL},
};

enum vf_err vf_parse_bytes(const char *s, uint64_t *out, struct vf_error *err)
{
    struct num n;
    enum vf_err rc = split_number(s, "size", &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (vf__strcasecmp(n.suffix, size_units[i].name) != 0)
            continue;
        /* "1.5" bytes makes no sense; fractions need a unit */
        if (size_units[i].mult == 1 && n.frac)
            break;
        if (!scale_exact(&n, size_units[i].mult, out))
            return vf__errf(err, VF_ERANGE, "size '%s' is too large", s);
        return VF_OK;
    }
    return vf__errf(err, VF_EINVAL,
                    "bad size '%s' (accepted: 24GiB, 24G = GiB, 24GB = 10^9 bytes, 24576MiB, "
                    "or a byte count)",
                    s);
}

enum vf_err vf_parse_tokens(const char *s, uint64_t *out, struct vf_error *err)
{
    struct num n;
    enum vf_err rc = split_number(s, "token count", &n, err);
    if (rc)
        return rc;
    uint64_t mult = 0;
    if (!*n.suffix)
        mult = 1;
    else if (!vf__strcasecmp(n.suffix, "k"))
        mult = 1024;
    else if (!vf__strcasecmp(n.suffix, "m"))
        mult = 1024 * 1024;
    if (!mult || (mult == 1 && n.frac))
        return vf__errf(err, VF_EINVAL,
                        "bad token count '%s' (accepted: 32768, 32k, 32K, 128k, 1M)", s);
    if (!scale_exact(&n, mult, out) || *out > VF_MAX_CTX_TOKENS)
        return vf__errf(err, VF_ERANGE, "token count '%s' is over the limit of %llu", s,
                        (unsigned long long)VF_MAX_CTX_TOKENS);
    return VF_OK;
}

enum vf_err vf_parse_price(const char *s, uint64_t *out_micro, struct vf_error *err)
{
    struct num n;
    enum vf_err rc = split_number(s, "price", &n, err);
    if (rc)
        return rc;
    if (*n.suffix || n.frac_scale > 1000000)
        return vf__errf(err, VF_EINVAL,
                        "bad price '%s' (expected a decimal number with at most 6 decimals)", s);
    if (!scale_exact(&n, 1000000, out_micro))
        return vf__errf(err, VF_ERANGE, "price '%s' is too large", s);
    return VF_OK;
}

enum vf_err vf_parse_count(const char *s, uint64_t *out, struct vf_error *err)
{
    /* the common cell, up to 19 plain digits (below 2^64), without the general path */
    uint64_t v = 0;
    const char *p = s;
    for (; p && *p >= '0' && *p <= '9' && p - s < 19; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (p != s && !*p) {
        *out = v;
        return VF_OK;
    }
    struct num n;
    enum vf_err rc = split_number(s, "count", &n, err);
    if (rc)
        return rc;
    if (*n.suffix || n.frac_scale != 1)
        return vf__errf(err, VF_EINVAL, "bad count '%s' (expected a whole number)", s);
    if (n.ip == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "count '%s' is too large", s);
    *out = n.ip;
    return VF_OK;
}

/* strtod(s, end), with the common text - up to 19 digits, at most 22 of them after a point, no
 * sign and no exponent - read without libc's general path: a mantissa below 2^53 divided by
 * an exact power of ten is one correctly rounded operation (Clinger 1990), the value strtod
 * gives. Anything else is strtod's. */
double vf__strtod(const char *s, char **end)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t m = 0;
    int digits = 0, frac = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
        m = m * 10 + (uint64_t)(*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9' && digits < 19; p++, digits++, frac++)
            m = m * 10 + (uint64_t)(*p - '0');
    if (!digits || frac > 22 || m >> 53 || (*p >= '0' && *p <= '9') || *p == 'e' || *p == 'E' ||
        *p == 'x' || *p == 'X')
        return strtod(s, end);
    if (end)
        *end = (char *)(uintptr_t)p;
    return (double)m / p10[frac];
}

/* ------------------------------------------------------------------ printing */

/* Prints v / div with 2 decimals, rounded half up, exactly. */
static void print_fixed2(char *buf, size_t cap, uint64_t v, uint64_t div, const char *unit)
{
    unsigned __int128 hundredths = ((unsigned __int128)v * 100 + div / 2) / div;
    snprintf(buf, cap, "%llu.%02u %s", (unsigned long long)(hundredths / 100),
             (unsigned)(hundredths % 100), unit);
}

char *vf_format_bytes(char *buf, size_t cap, uint64_t bytes, unsigned flags)
{
    if (bytes == VF_UNKNOWN) {
        snprintf(buf, cap, "?");
        return buf;
    }
    if (flags & VF_FMT_EXACT) {
        snprintf(buf, cap, "%llu", (unsigned long long)bytes);
        return buf;
    }
    static const char *const iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    static const char *const si[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    uint64_t base = (flags & VF_FMT_SI) ? 1000 : 1024;
    const char *const *names = (flags & VF_FMT_SI) ? si : iec;
    uint64_t div = 1;
    int k = 0;
    /* the largest unit in which the number is at least 1 */
    while (k < 5 && bytes / div >= base) {
        div *= base;
        k++;
    }
    if (k == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        print_fixed2(buf, cap, bytes, div, names[k]);
    return buf;
}

char *vf_format_sbytes(char *buf, size_t cap, int64_t bytes)
{
    if (bytes < 0 && cap > 1) {
        buf[0] = '-';
        vf_format_bytes(buf + 1, cap - 1, (uint64_t)0 - (uint64_t)bytes, VF_FMT_IEC);
    } else {
        vf_format_bytes(buf, cap, (uint64_t)bytes, VF_FMT_IEC);
    }
    return buf;
}

char *vf_format_price(char *buf, size_t cap, uint64_t micro, int decimals)
{
    if (micro == VF_UNKNOWN) {
        snprintf(buf, cap, "?");
        return buf;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 6)
        decimals = 6;
    uint64_t div = 1;
    for (int i = decimals; i < 6; i++)
        div *= 10;
    uint64_t v = (micro + div / 2) / div; /* in units of 10^-decimals */
    uint64_t one = 1;
    for (int i = 0; i < decimals; i++)
        one *= 10;
    if (decimals)
        snprintf(buf, cap, "%llu.%0*llu", (unsigned long long)(v / one), decimals,
                 (unsigned long long)(v % one));
    else
        snprintf(buf, cap, "%llu", (unsigned long long)v);
    return buf;
}

char *vf_format_tokens(char *buf, size_t cap, uint64_t tokens)
{
    if (tokens == VF_UNKNOWN)
        snprintf(buf, cap, "?");
    else if (tokens >= 1024 && tokens % 1024 == 0)
        snprintf(buf, cap, "%lluk", (unsigned long long)(tokens / 1024));
    else
        snprintf(buf, cap, "%llu", (unsigned long long)tokens);
    return buf;
}

char *vf__format_grouped(char *buf, size_t cap, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t k = 0;
    for (int i = 0; i < n && k + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = 0;
    return buf;
}
