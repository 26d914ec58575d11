/* layers.c: the include check: every #include "..." in the tree's .c, .h, .cu
 * and .cuh files may name a file of its own layer or of a lower one only.
 *
 * The layers are declared in tools/layers.txt. `build/tools/layers [-s DIR]...
 * [ROOT]` (`make layers`) prints each violation as FILE:LINE and exits 1 if
 * there is one; tests/test_layers.c includes this file with LY_NO_MAIN and
 * calls ly_check() on the tree and on a synthetic one. A quoted include is
 * resolved as the compiler does: next to the including file first, then in
 * the table's folders (the -I folders); one that is in neither is not ours
 * (a generated or system header) and is counted as unresolved. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LY_MAX_ENTRIES 64
#define LY_MAX_SKIP 16
#define LY_PATH 1024

typedef struct ly_entry {
    int layer;
    int folder;                    /* 1: path ends in '/' and names a folder */
    char path[LY_PATH];
} ly_entry;

typedef struct ly_counts {
    int files;                     /* source files read */
    int includes;                  /* quoted includes resolved to a file of the tree */
    int unresolved;                /* quoted includes of files not in the tree */
    int violations;                /* lines reported */
} ly_counts;

typedef struct ly_ctx {
    const char *root;
    ly_entry entries[LY_MAX_ENTRIES];
    int n_entries;
    const char *skip[LY_MAX_SKIP];
    int n_skip;
    FILE *out;
    ly_counts counts;
} ly_ctx;

/* Reads the table at path into c (c->root set); -1 with the reason on c->out
 * if the file cannot be read, a line is not `LAYER PATH [# comment]` or names
 * a folder of the tree without its trailing '/'. */
static int ly_read_table(ly_ctx *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(c->out, "%s: cannot be read\n", path);
        return -1;
    }
    char line[LY_PATH + 256];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        int layer, used = 0;
        char name[LY_PATH];
        if (sscanf(line, " %d %1023s %n", &layer, name, &used) != 2) {
            if (strspn(line, " \t\r\n") != strlen(line)) {
                fprintf(c->out, "%s:%d: not `LAYER PATH`\n", path, lineno);
                rc = -1;
            }
            continue;
        }
        if (line[used] != '\0' || layer < 0 || c->n_entries == LY_MAX_ENTRIES) {
            fprintf(c->out, "%s:%d: not `LAYER PATH` or too many lines\n", path, lineno);
            rc = -1;
            continue;
        }
        ly_entry *e = &c->entries[c->n_entries++];
        e->layer = layer;
        e->folder = name[strlen(name) - 1] == '/';
        snprintf(e->path, sizeof e->path, "%s", name);
        char full[2 * LY_PATH + 2];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", c->root, name);
        if (!e->folder && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(c->out, "%s:%d: %s is a folder: write it %s/\n", path, lineno, name, name);
            rc = -1;
        }
    }
    fclose(f);
    if (rc == 0 && c->n_entries == 0) {
        fprintf(c->out, "%s: declares no layer\n", path);
        rc = -1;
    }
    return rc;
}

/* The table entry a tree-relative path belongs to (the longest folder or
 * file that names it), or NULL if it is in no layer. */
static const ly_entry *ly_entry_of(const ly_ctx *c, const char *rel)
{
    const ly_entry *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < c->n_entries; i++) {
        const ly_entry *e = &c->entries[i];
        size_t len = strlen(e->path);
        int match = e->folder ? strncmp(rel, e->path, len) == 0 : strcmp(rel, e->path) == 0;
        if (match && len > best_len) {
            best = e;
            best_len = len;
        }
    }
    return best;
}

/* Rewrites a relative path without "." and "dir/.." parts, in place; a path
 * that climbs above the root keeps its leading "../". */
static void ly_normalize(char *path)
{
    char *parts[LY_PATH / 2];
    int n = 0;
    char copy[LY_PATH];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *save = NULL, *p = strtok_r(copy, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0 && n > 0 && strcmp(parts[n - 1], "..") != 0)
            n--;
        else
            parts[n++] = p;
    }
    path[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n && used < LY_PATH; i++)
        used += snprintf(path + used, LY_PATH - used, i ? "/%s" : "%s", parts[i]);
}

/* 1 if root/rel is a regular file inside the root. */
static int ly_is_file(const ly_ctx *c, const char *rel)
{
    if (strncmp(rel, "../", 3) == 0 || rel[0] == '/' || rel[0] == '\0')
        return 0;
    char full[2 * LY_PATH + 2];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    struct stat st;
    return stat(full, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finds the file that `#include "name"` in file `from` reaches: next to
 * `from`, else in each folder of the table. Returns 1 with the path in
 * found, 0 if no file of the tree has that name (not ours), 2 if two folders
 * hold it (found and other name both: the -I folders share one namespace). */
static int ly_resolve(const ly_ctx *c, const char *from, const char *name,
                      char *found, char *other)
{
    char cand[LY_PATH];
    if (name[0] == '/')
        return 0;
    const char *slash = strrchr(from, '/');
    int dir_len = slash ? (int)(slash - from) + 1 : 0;
    int len = snprintf(cand, sizeof cand, "%.*s%s", dir_len, from, name);
    ly_normalize(cand);
    if (len < (int)sizeof cand && ly_is_file(c, cand)) {
        strcpy(found, cand);
        return 1;
    }
    int hits = 0;
    for (int i = 0; i < c->n_entries; i++) {
        if (!c->entries[i].folder)
            continue;
        len = snprintf(cand, sizeof cand, "%s%s", c->entries[i].path, name);
        ly_normalize(cand);
        if (len >= (int)sizeof cand || !ly_is_file(c, cand) || (hits && strcmp(cand, found) == 0))
            continue;
        strcpy(hits ? other : found, cand);
        if (++hits == 2)
            return 2;
    }
    return hits;
}

/* Blanks out comments in a C/CUDA source (newlines kept, so line numbers
 * stay), leaving string and character literals alone. */
static void ly_strip_comments(char *s)
{
    for (char *p = s; *p; p++) {
        if (*p == '"' || *p == '\'') {
            char q = *p;
            for (p++; *p && *p != q && *p != '\n'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++)
                *p = ' ';
            if (!*p)
                return;
        } else if (p[0] == '/' && p[1] == '*') {
            p[0] = p[1] = ' ';
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                if (*p != '\n')
                    *p = ' ';
            if (!*p)
                return;
            p[0] = p[1] = ' ';
            p++;
        }
    }
}

/* If line (up to its newline) is `# include "NAME"`, copies NAME into name
 * and returns 1; 0 otherwise. */
static int ly_quoted_include(const char *line, char *name, size_t len)
{
    const char *p = line + strspn(line, " \t");
    if (*p++ != '#')
        return 0;
    p += strspn(p, " \t");
    if (strncmp(p, "include", 7) != 0)
        return 0;
    p += 7;
    p += strspn(p, " \t");
    if (*p++ != '"')
        return 0;
    const char *end = strpbrk(p, "\"\n");
    if (!end || *end != '"' || (size_t)(end - p) >= len || end == p)
        return 0;
    memcpy(name, p, (size_t)(end - p));
    name[end - p] = '\0';
    return 1;
}

/* Checks one include of file rel (layer entry e, may be NULL) at lineno and
 * reports a violation on c->out. */
static void ly_check_include(ly_ctx *c, const char *rel, const ly_entry *e, int lineno,
                             const char *name, int *reported_no_layer)
{
    char found[LY_PATH], other[LY_PATH];
    int r = ly_resolve(c, rel, name, found, other);
    if (r == 0) {
        c->counts.unresolved++;
        return;
    }
    c->counts.includes++;
    if (r == 2) {
        fprintf(c->out, "%s:%d: #include \"%s\" is ambiguous: %s and %s (one name per header)\n",
                rel, lineno, name, found, other);
        c->counts.violations++;
        return;
    }
    const ly_entry *to = ly_entry_of(c, found);
    if (!e) {
        if (!*reported_no_layer) {
            fprintf(c->out, "%s:%d: the file is in no layer: declare its folder in the layer table\n",
                    rel, lineno);
            c->counts.violations++;
        }
        *reported_no_layer = 1;
    } else if (!to) {
        fprintf(c->out, "%s:%d: #include \"%s\" reaches %s, which is in no layer\n",
                rel, lineno, name, found);
        c->counts.violations++;
    } else if (to->layer > e->layer) {
        fprintf(c->out, "%s:%d: #include \"%s\" reaches up: %s is layer %d (%s), "
                "%s is layer %d (%s)\n", rel, lineno, name, found, to->layer, to->path,
                rel, e->layer, e->path);
        c->counts.violations++;
    }
}

/* Reads root/rel and checks each of its quoted includes; an unreadable file
 * is reported as a violation. */
static void ly_check_file(ly_ctx *c, const char *rel)
{
    char full[2 * LY_PATH + 2];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    FILE *f = fopen(full, "rb");
    char *text = NULL;
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0
        && (text = malloc((size_t)size + 1)) && fread(text, 1, (size_t)size, f) == (size_t)size)
        text[size] = '\0';
    else
        size = -1;
    if (f)
        fclose(f);
    if (size < 0) {
        fprintf(c->out, "%s:0: cannot be read\n", rel);
        c->counts.violations++;
        free(text);
        return;
    }
    c->counts.files++;
    ly_strip_comments(text);
    const ly_entry *e = ly_entry_of(c, rel);
    int lineno = 1, reported_no_layer = 0;
    for (char *line = text; line; lineno++) {
        char name[LY_PATH];
        if (ly_quoted_include(line, name, sizeof name))
            ly_check_include(c, rel, e, lineno, name, &reported_no_layer);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    free(text);
}

/* 1 for the file names the check reads: .c .h .cu .cuh */
static int ly_is_source(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".c") == 0 || strcmp(dot, ".h") == 0 ||
                   strcmp(dot, ".cu") == 0 || strcmp(dot, ".cuh") == 0);
}

static int ly_compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks every source file under root/rel ("" for the root), in name order,
 * skipping hidden entries, links and the skip list. An unreadable folder is
 * reported as a violation. */
static void ly_walk(ly_ctx *c, const char *rel)
{
    char full[2 * LY_PATH + 2];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    DIR *d = opendir(full);
    if (!d) {
        fprintf(c->out, "%s/:0: cannot be read\n", rel);
        c->counts.violations++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int oom = 0;
    for (struct dirent *de; !oom && (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            oom = !grown;
            if (grown)
                names = grown;
        }
        if (!oom && !(names[n] = strdup(de->d_name)))
            oom = 1;
        n += !oom;
    }
    closedir(d);
    if (oom) {
        fprintf(c->out, "%s/:0: out of memory listing the folder\n", rel);
        c->counts.violations++;
    }
    if (n > 1)
        qsort(names, n, sizeof *names, ly_compare_names);
    for (size_t i = 0; i < n; i++) {
        char child[LY_PATH];
        snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        snprintf(full, sizeof full, "%s/%s", c->root, child);
        struct stat st;
        int skipped = 0;
        for (int k = 0; k < c->n_skip; k++)
            skipped |= strcmp(child, c->skip[k]) == 0;
        if (!skipped && lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                ly_walk(c, child);
            else if (S_ISREG(st.st_mode) && ly_is_source(names[i]))
                ly_check_file(c, child);
        }
        free(names[i]);
    }
    free(names);
}

/* Checks the tree at root against the layer table at table_path, skipping
 * the folders in skip (relative to root, e.g. "build"); writes one line per
 * violation to out and fills counts. Returns 0, or -1 (reason on out) when
 * the table cannot be read. */
int ly_check(const char *root, const char *table_path, const char *const *skip, int n_skip,
             FILE *out, ly_counts *counts)
{
    ly_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(out, "layers: out of memory\n");
        return -1;
    }
    c->root = root;
    c->out = out;
    for (int i = 0; i < n_skip && c->n_skip < LY_MAX_SKIP; i++) {
        const char *s = skip[i];
        while (strncmp(s, "./", 2) == 0)
            s += 2;
        c->skip[c->n_skip++] = s;
    }
    int rc = ly_read_table(c, table_path);
    if (rc == 0)
        ly_walk(c, "");
    *counts = c->counts;
    free(c);
    return rc;
}

#ifndef LY_NO_MAIN
int main(int argc, char **argv)
{
    const char *skip[LY_MAX_SKIP];
    char skip_buf[LY_MAX_SKIP][LY_PATH];
    int n_skip = 0;
    const char *root = ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && n_skip < LY_MAX_SKIP) {
            snprintf(skip_buf[n_skip], LY_PATH, "%s", argv[++i]);
            size_t len = strlen(skip_buf[n_skip]);
            while (len > 1 && skip_buf[n_skip][len - 1] == '/')
                skip_buf[n_skip][--len] = '\0';
            skip[n_skip] = skip_buf[n_skip];
            n_skip++;
        } else if (argv[i][0] != '-' && i == argc - 1) {
            root = argv[i];
        } else {
            fprintf(stderr, "usage: layers [-s SKIPDIR]... [ROOT]  (table: ROOT/tools/layers.txt)\n");
            return 2;
        }
    }
    char table[LY_PATH + 32];
    snprintf(table, sizeof table, "%s/tools/layers.txt", root);
    ly_counts counts;
    if (ly_check(root, table, skip, n_skip, stdout, &counts) != 0)
        return 2;
    printf("layers: %d files, %d includes checked, %d not ours, %d violations\n",
           counts.files, counts.includes, counts.unresolved, counts.violations);
    return counts.violations ? 1 : 0;
}
#endif
