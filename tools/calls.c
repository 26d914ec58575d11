/* calls.c: the call-cycle check: among the .c files of one folder (tuner/),
 * no file may reach itself through calls of other files' functions.
 *
 * `build/tools/calls [-g] FOLDER` (`make layers` runs it on tuner/) reads every
 * .c file of FOLDER, takes the functions each one defines (a line at column 0
 * that is not a declaration, a comment or a preprocessor line, whose first
 * `NAME(` is followed by a body), and draws an edge A -> B when A's code
 * (comments and strings skipped) names a function B defines without
 * `static` and A defines none of that name. It prints every file of a cycle and exits 1 if there is one; -g
 * also prints the graph, one `A -> B C ...` line per file.
 * tests/test_layers.c includes this file with CL_NO_MAIN and calls cl_check()
 * on the tree's tuner/ and on synthetic folders. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_MAX_FILES 128
#define CL_MAX_DEFS 4096
#define CL_NAME 64

typedef struct cl_def {
    char name[CL_NAME];
    int file;
    int is_static;                   /* file-local: names in its file mean it */
} cl_def;

typedef struct cl_graph {
    int n_files;
    char file[CL_MAX_FILES][256];
    char *text[CL_MAX_FILES];        /* comments and literals blanked */
    cl_def def[CL_MAX_DEFS];
    int n_defs;
    unsigned char edge[CL_MAX_FILES][CL_MAX_FILES];
} cl_graph;

/* The file's text (malloc'd, NUL-terminated) or NULL. */
static char *cl_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    size_t got;
    while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *more = realloc(s, cap * 2);
            if (!more) {
                free(s);
                s = NULL;
                break;
            }
            s = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (s)
        s[len] = '\0';
    return s;
}

/* Blanks comments, string and character literals (newlines kept). */
static void cl_blank(char *s)
{
    for (char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n')
                    *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++)
                *p = ' ';
            p--;
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            for (; *p && *p != q && *p != '\n'; p++) {
                if (*p == '\\' && p[1])
                    *p++ = ' ';
                *p = ' ';
            }
            if (!*p)
                return;
        }
    }
}

static int cl_ident_char(int ch) { return isalnum(ch) || ch == '_'; }

/* Records the functions file fi defines without static. */
static void cl_find_defs(cl_graph *g, int fi)
{
    const char *s = g->text[fi];
    for (const char *line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (!isalpha((unsigned char)*line) || strncmp(line, "typedef", 7) == 0 ||
            strncmp(line, "extern", 6) == 0)
            continue;
        int is_static = strncmp(line, "static", 6) == 0;
        const char *paren = line;
        while (*paren && *paren != '(' && *paren != '\n' && *paren != ';' && *paren != '=')
            paren++;
        if (*paren != '(')
            continue;
        /* a definition: the parameter list closes, then a body opens */
        int depth = 0;
        const char *q = paren;
        for (; *q; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')' && --depth == 0)
                break;
        }
        if (!*q)
            continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n')
            q++;
        if (*q != '{')
            continue;
        const char *end = paren;
        while (end > line && end[-1] == ' ')
            end--;
        const char *start = end;
        while (start > line && cl_ident_char((unsigned char)start[-1]))
            start--;
        if (end - start <= 0 || end - start >= CL_NAME || g->n_defs == CL_MAX_DEFS)
            continue;
        cl_def *d = &g->def[g->n_defs++];
        memcpy(d->name, start, (size_t)(end - start));
        d->name[end - start] = '\0';
        d->file = fi;
        d->is_static = is_static;
    }
}

/* The file whose function name means in file fi: fi itself when it
 * defines one of that name (static or not), else the file that defines it
 * without static; -1 none. */
static int cl_owner(const cl_graph *g, int fi, const char *name)
{
    int owner = -1;
    for (int i = 0; i < g->n_defs; i++) {
        if (strcmp(g->def[i].name, name) != 0)
            continue;
        if (g->def[i].file == fi)
            return fi;
        if (!g->def[i].is_static)
            owner = g->def[i].file;
    }
    return owner;
}

/* Edges from file fi to the files whose functions it names. */
static void cl_find_edges(cl_graph *g, int fi)
{
    const char *s = g->text[fi];
    for (const char *p = s; *p;) {
        if (!cl_ident_char((unsigned char)*p) || (p > s && cl_ident_char((unsigned char)p[-1]))) {
            p++;
            continue;
        }
        const char *e = p;
        while (cl_ident_char((unsigned char)*e))
            e++;
        if (e - p < CL_NAME && !isdigit((unsigned char)*p)) {
            char name[CL_NAME];
            memcpy(name, p, (size_t)(e - p));
            name[e - p] = '\0';
            int to = cl_owner(g, fi, name);
            if (to >= 0 && to != fi)
                g->edge[fi][to] = 1;
        }
        p = e;
    }
}

static int cl_compare_names(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Depth-first search for a cycle through fi; state 1 on the path, 2 done.
 * On a cycle, the files on it are written to out and 1 returned. */
static int cl_dfs(const cl_graph *g, int fi, int *state, int *path, int depth, FILE *out)
{
    state[fi] = 1;
    path[depth] = fi;
    for (int to = 0; to < g->n_files; to++) {
        if (!g->edge[fi][to])
            continue;
        if (state[to] == 1) {
            fprintf(out, "call cycle:");
            int k = depth;
            while (k > 0 && path[k] != to)
                k--;
            for (int j = k; j <= depth; j++)
                fprintf(out, " %s ->", g->file[path[j]]);
            fprintf(out, " %s\n", g->file[to]);
            return 1;
        }
        if (state[to] == 0 && cl_dfs(g, to, state, path, depth + 1, out))
            return 1;
    }
    state[fi] = 2;
    return 0;
}

/* Checks folder: 0 no cycle, 1 a cycle (printed on out), -1 unreadable.
 * graph: also print every file's edges. */
int cl_check(const char *folder, int graph, FILE *out)
{
    cl_graph *g = calloc(1, sizeof *g);
    DIR *dir = g ? opendir(folder) : NULL;
    if (!dir) {
        fprintf(out, "%s: cannot be read\n", folder);
        free(g);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && g->n_files < CL_MAX_FILES) {
        size_t len = strlen(de->d_name);
        if (len > 2 && len < 255 && strcmp(de->d_name + len - 2, ".c") == 0)
            snprintf(g->file[g->n_files++], sizeof g->file[0], "%s", de->d_name);
    }
    closedir(dir);
    qsort(g->file, (size_t)g->n_files, sizeof g->file[0], cl_compare_names);
    int rc = 0;
    for (int i = 0; i < g->n_files && rc == 0; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, g->file[i]);
        g->text[i] = cl_read(path);
        if (!g->text[i]) {
            fprintf(out, "%s: cannot be read\n", path);
            rc = -1;
            continue;
        }
        cl_blank(g->text[i]);
        cl_find_defs(g, i);
    }
    for (int i = 0; i < g->n_files && rc == 0; i++)
        cl_find_edges(g, i);
    if (rc == 0 && graph)
        for (int i = 0; i < g->n_files; i++) {
            fprintf(out, "%s ->", g->file[i]);
            for (int to = 0; to < g->n_files; to++)
                if (g->edge[i][to])
                    fprintf(out, " %s", g->file[to]);
            fprintf(out, "\n");
        }
    int state[CL_MAX_FILES] = {0}, path[CL_MAX_FILES];
    for (int i = 0; i < g->n_files && rc == 0; i++)
        if (state[i] == 0 && cl_dfs(g, i, state, path, 0, out))
            rc = 1;
    for (int i = 0; i < g->n_files; i++)
        free(g->text[i]);
    free(g);
    return rc;
}

#ifndef CL_NO_MAIN
int main(int argc, char **argv)
{
    int graph = argc > 1 && strcmp(argv[1], "-g") == 0;
    if (argc != 2 + graph) {
        fprintf(stderr, "usage: %s [-g] FOLDER\n", argv[0]);
        return 2;
    }
    int rc = cl_check(argv[1 + graph], graph, stdout);
    if (rc == 0)
        printf("%s: no call cycle among its files\n", argv[1 + graph]);
    return rc == 0 ? 0 : 1;
}
#endif
