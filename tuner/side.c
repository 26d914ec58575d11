/* side.c: the side measurements the worker sends back in a reply's blob
 * (vendor libraries, device ceilings), one tab-separated line each, and
 * their parsing in the parent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tn.h"

void tn_side_put(tn_side_buf *b, const tn_side *s)
{
    char note[sizeof s->note];
    size_t k = 0;
    for (const char *p = s->note; *p && k + 1 < sizeof note; p++)
        note[k++] = (*p == '\t' || *p == '\n' || *p == '\r') ? ' ' : *p;
    note[k] = '\0';
    char line[800];
    int n = snprintf(line, sizeof line, "%s\t%d\t%.9g\t%.9g\t%.9g\t%d\t%.9g\t%.9g\t%.9g\t%s\n",
                     s->name, s->status, s->time_ms, s->min_ms, s->max_ms, s->runs,
                     s->rel_error, s->gflops, s->gbs, note);
    if (n < 0 || b->oom)
        return;
    if ((size_t)n >= sizeof line)
        n = (int)sizeof line - 1;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, line, (size_t)n);
    b->len += (size_t)n;
    b->p[b->len] = '\0';
}

int tn_side_parse(const void *blob, size_t size, tn_side *out, int max)
{
    const char *p = blob, *end = p ? p + size : NULL;
    int n = 0;
    while (p && p < end && n < max) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char line[800];
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : end;
        tn_side *s = &out[n];
        memset(s, 0, sizeof *s);
        int used = 0;
        if (sscanf(line, "%31[^\t]\t%d\t%lf\t%lf\t%lf\t%d\t%lf\t%lf\t%lf\t%n", s->name,
                   &s->status, &s->time_ms, &s->min_ms, &s->max_ms, &s->runs, &s->rel_error,
                   &s->gflops, &s->gbs, &used) < 9 || used == 0)
            continue;
        snprintf(s->note, sizeof s->note, "%s", line + used);
        n++;
    }
    return n;
}
