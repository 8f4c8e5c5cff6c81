/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tsv.c - tab-separated tables: a header line naming the columns, one record per line,
 * '#' comment lines and blank lines skipped. Every record must have exactly as many fields
 * as the header; an error names the file, the line and what was found.
 */
#include "internal.h"

#include <string.h>

enum vf_err vf__tsv_parse(struct vf_arena *a, const char *text, size_t len, const char *origin,
                          struct vf__tsv *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    out->origin = origin;
    /* count lines to size the arrays (bounded by VF_MAX_TSV_ROWS); memchr is vectorized */
    size_t n_lines = 1;
    for (const char *p = text, *e = text + len; (p = memchr(p, '\n', (size_t)(e - p))); p++)
        n_lines++;
    if (n_lines > VF_MAX_TSV_ROWS)
        return vf__errf(err, VF_ELIMIT, "%s: %zu lines is over the limit of %d", origin, n_lines,
                        VF_MAX_TSV_ROWS);
    /* one copy of the text, split in place: fields point into it */
    char *buf = vf_arena_strndup(a, text, len);
    /* filled up to n_rows */
    out->rows = vf__arena_take(a, n_lines * sizeof *out->rows);
    out->lines = vf__arena_take(a, n_lines * sizeof *out->lines);
    if (!buf || !out->rows || !out->lines)
        return vf__errf(err, VF_ENOMEM, "%s: out of memory", origin);

    size_t pos = 0, line = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        line++;
        size_t n = end - pos;
        char *l = buf + pos;
        pos = end + 1;
        l[n] = 0; /* the newline, or the copy's terminator */
        if (n && l[n - 1] == '\r')
            l[--n] = 0;
        if (n == 0 || l[0] == '#')
            continue;
        if (n > VF_MAX_TSV_LINE)
            return vf__errf(err, VF_ELIMIT, "%s:%zu: line of %zu bytes is over the limit of %d",
                            origin, line, n, VF_MAX_TSV_LINE);
        if (memchr(l, 0, n))
            return vf__errf(err, VF_EFORMAT, "%s:%zu: NUL byte in a text line", origin, line);
        char *f[VF_MAX_TSV_FIELDS];
        size_t nf = 0;
        f[nf++] = l;
        for (char *t = l; (t = memchr(t, '\t', n - (size_t)(t - l)));) {
            if (nf >= VF_MAX_TSV_FIELDS)
                return vf__errf(err, VF_ELIMIT, "%s:%zu: more than %d fields", origin, line,
                                VF_MAX_TSV_FIELDS);
            *t++ = 0;
            f[nf++] = t;
        }
        char **fields = vf__arena_take(a, nf * sizeof *fields);
        if (!fields)
            return vf__errf(err, VF_ENOMEM, "%s: out of memory", origin);
        memcpy(fields, f, nf * sizeof *fields);
        if (!out->cols) {
            out->cols = fields;
            out->n_cols = nf;
            continue;
        }
        if (nf != out->n_cols)
            return vf__errf(err, VF_EFORMAT, "%s:%zu: %zu fields, expected %zu (%s ... %s)", origin,
                            line, nf, out->n_cols, out->cols[0], out->cols[out->n_cols - 1]);
        out->rows[out->n_rows] = fields;
        out->lines[out->n_rows] = line;
        out->n_rows++;
    }
    if (!out->cols)
        return vf__errf(err, VF_EFORMAT, "%s: no header line", origin);
    return VF_OK;
}

int vf__tsv_col(const struct vf__tsv *t, const char *name)
{
    for (size_t i = 0; i < t->n_cols; i++)
        if (!strcmp(t->cols[i], name))
            return (int)i;
    return -1;
}
