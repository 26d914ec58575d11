/* bench_kernels.h: the CUDA benches' configurations of a family compiled here and loaded:
 * configuration lists parsed ("TEXT;TEXT;..."), compiled with NVRTC on up to 16 threads,
 * loaded as modules with their executors, and released. Used by bench_dgemm and bench_bgemm, after the library's headers. */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cudrv.h, exec.h and tpl.h come first, included by the bench (inside extern "C") */

typedef struct bn_kernel {
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    void *cubin;
    size_t size;
    at_status status;
    char *log;
    CUmodule mod;
    at_exec ex;
    char err[1024];
} bn_kernel;

typedef struct bn_pool {
    const tpl_family *fam;
    bn_kernel *k;
    int n, next;
    const char *arch;
    pthread_mutex_t lock;
} bn_pool;

static void *bn_compile_worker(void *arg)
{
    bn_pool *p = (bn_pool *)arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        bn_kernel *k = &p->k[i];
        k->status = tpl_compile(p->fam, k->cfg, p->arch, &k->cubin, &k->size, &k->log);
    }
}

/* The configurations of f in `list` (texts separated by ';') into k (at most max), their
 * texts normalized; a text that does not parse is reported and left out, and with
 * check_valid so is one not valid on dev. Returns the count. */
static int bn_parse_list(const tpl_family *f, const at_device_info *dev, const char *list,
                         bn_kernel *k, int max, int check_valid)
{
    int n = 0;
    char *copy = strdup(list);
    for (char *tok = strtok(copy, ";"); tok && n < max; tok = strtok(NULL, ";")) {
        char err[256];
        while (*tok == ' ' || *tok == '\n')
            tok++;
        if (!*tok)
            continue;
        if (tpl_config_parse(f, tok, k[n].cfg, err, sizeof err) != AT_OK) {
            fprintf(stderr, "bad configuration %s: %s\n", tok, err);
            continue;
        }
        tpl_config_format(f, k[n].cfg, k[n].text, sizeof k[n].text);
        if (check_valid && !f->valid(k[n].cfg, dev, err, sizeof err)) {
            printf("skip (not valid here: %s): %s\n", err, k[n].text);
            continue;
        }
        n++;
    }
    free(copy);
    return n;
}

/* Compiles (f, on up to 16 threads) and loads the n kernels of k (texts parsed already);
 * 0 if one fails (reported), else 1. */
static int bn_build(const cudrv *cu, const at_device_info *dev, const tpl_family *f,
                    bn_kernel *k, int n)
{
    bn_pool p;
    p.fam = f;
    p.k = k;
    p.n = n;
    p.next = 0;
    p.arch = dev->arch;
    pthread_mutex_init(&p.lock, NULL);
    pthread_t th[16];
    int nt = n < 16 ? n : 16;
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, bn_compile_worker, &p);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        if (k[i].status != AT_OK || cu->ModuleLoadData(&k[i].mod, k[i].cubin) != CUDA_SUCCESS) {
            fprintf(stderr, "%s: %s %s\n", k[i].text, at_status_string(k[i].status),
                    k[i].log ? k[i].log : "");
            return 0;
        }
        ex_init(&k[i].ex, cu, dev, k[i].mod, 0, k[i].err, sizeof k[i].err);
    }
    return 1;
}

/* Frees the n kernels of k and k itself. */
static void bn_release(const cudrv *cu, bn_kernel *k, int n)
{
    for (int i = 0; i < n; i++) {
        ex_release(&k[i].ex);
        cu->ModuleUnload(k[i].mod);
        free(k[i].cubin);
        free(k[i].log);
    }
    free(k);
}

#endif
