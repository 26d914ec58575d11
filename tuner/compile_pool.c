/* compile_pool.c: NVRTC compiles on every CPU core: a FIFO of jobs served
 * by worker threads, so the GPU never waits for the compiler. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tn.h"

#define POOL_MAX_THREADS 256

typedef struct pool_node {
    tn_job *job;
    struct pool_node *next;
} pool_node;

struct tn_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;             /* a job was queued, or stop */
    pthread_cond_t done;             /* a job finished */
    pool_node *head, *tail;
    int stop;
    int n_threads;
    pthread_t threads[POOL_MAX_THREADS];
};

int tn_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

static void *pool_thread(void *arg)
{
    tn_pool *pool = arg;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->head && !pool->stop)
            pthread_cond_wait(&pool->work, &pool->mu);
        if (pool->stop)
            break;
        pool_node *n = pool->head;
        pool->head = n->next;
        if (!pool->head)
            pool->tail = NULL;
        pthread_mutex_unlock(&pool->mu);

        tn_job *job = n->job;
        free(n);
        double t0 = tn_now();
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status st = tpl_compile(job->fam, job->cfg, job->arch, &cubin, &size, &log);
        double ms = (tn_now() - t0) * 1000.0;

        pthread_mutex_lock(&pool->mu);
        job->status = st;
        job->cubin = cubin;
        job->cubin_size = size;
        job->log = log;
        job->compile_ms = ms;
        job->done = 1;
        pthread_cond_broadcast(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

tn_pool *tn_pool_create(int n_threads)
{
    tn_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    if (n_threads < 1)
        n_threads = 1;
    if (n_threads > POOL_MAX_THREADS)
        n_threads = POOL_MAX_THREADS;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, pool_thread, pool) != 0)
            break;
        pool->n_threads++;
    }
    if (pool->n_threads == 0) {
        tn_pool_destroy(pool);
        return NULL;
    }
    return pool;
}

void tn_pool_submit(tn_pool *pool, tn_job *job)
{
    pool_node *n = malloc(sizeof *n);
    job->done = 0;
    job->cubin = NULL;
    job->log = NULL;
    if (!n) {
        job->status = AT_ERR_NO_MEMORY;
        job->done = 1;
        return;
    }
    n->job = job;
    n->next = NULL;
    pthread_mutex_lock(&pool->mu);
    if (pool->tail)
        pool->tail->next = n;
    else
        pool->head = n;
    pool->tail = n;
    pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->mu);
}

void tn_pool_wait(tn_pool *pool, tn_job *job)
{
    pthread_mutex_lock(&pool->mu);
    while (!job->done)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void tn_pool_destroy(tn_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mu);
    pool->stop = 1;
    while (pool->head) {
        pool_node *n = pool->head;
        pool->head = n->next;
        free(n);
    }
    pool->tail = NULL;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_threads; i++)
        pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->done);
    free(pool);
}
