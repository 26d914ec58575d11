/* compile_pool.c: NVRTC compiles on every CPU core: FIFOs of urgent, normal
 * and idle-time jobs served by threads, so the GPU never waits for NVRTC. */
#define _GNU_SOURCE                  /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tn.h"

#define POOL_MAX_THREADS 256

typedef struct pool_node {
    tn_job *job;
    struct pool_node *next;
} pool_node;

/* A running job its owner let go (tn_pool_detach): the compile finishes
 * into copy, which waits in the done list for tn_pool_take_detached. */
typedef struct pool_detached {
    const tn_job *job;               /* the owner's job, never touched again */
    tn_job *copy;
    struct pool_detached *next;
} pool_detached;

struct tn_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;             /* a job was queued, or stop */
    pthread_cond_t done;             /* a job finished */
    pool_node *head, *tail;          /* normal jobs */
    pool_node *uhead, *utail;        /* urgent jobs, served first */
    pool_node *ihead, *itail;        /* idle-time jobs, served last */
    int idle_running, idle_max;      /* at most idle_max idle jobs at once */
    int idle_queued;                 /* idle jobs not started */
    pool_detached *running, *finished;
    int stop;
    int n_threads;
    pthread_t threads[POOL_MAX_THREADS];
};

int tn_cpu_count_of(long online, int allowed)
{
    long n = online;
    if (allowed > 0 && (n < 1 || allowed < n))
        n = allowed;
    return n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

int tn_cpu_count(void)
{
    int allowed = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        allowed = CPU_COUNT(&set);
#endif
    return tn_cpu_count_of(sysconf(_SC_NPROCESSORS_ONLN), allowed);
}

/* Idle-time jobs are compiles certainly needed later (prefetches): they start only where
 * no urgent or normal job waits, and keep a quarter of the threads (at least one) free for
 * an urgent compile that comes while they run (a compile takes 0.2-3 s). Half, as before,
 * left 8 of 16 threads idle whenever an exhaustive problem's cubins were all there. */
int tn_pool_idle_cap(int n_threads)
{
    if (n_threads <= 1)
        return 1;
    int keep = n_threads / 4 > 1 ? n_threads / 4 : 1;
    return n_threads - keep;
}

int tn_pool_pick(int urgent, int normal, int idle, int idle_running, int idle_max)
{
    if (urgent)
        return 1;
    if (normal)
        return 0;
    return idle && idle_running < idle_max ? -1 : 2;
}

/* Compile threads run at this niceness (Linux: per thread): under load the
 * GPU workers and the threads that feed them, at 0, come first. A worker
 * starved of CPU leaves its GPU idle between timed launches, slows every
 * evaluation and adds noise to the timings of microsecond kernels; NVRTC's
 * own speed is unchanged wherever a core is free. */
#define POOL_NICE 5

static void *pool_thread(void *arg)
{
    tn_pool *pool = arg;
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), POOL_NICE);   /* best effort */
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        int pick;
        while ((pick = tn_pool_pick(pool->uhead != NULL, pool->head != NULL,
                                    pool->ihead != NULL, pool->idle_running,
                                    pool->idle_max)) == 2 && !pool->stop)
            pthread_cond_wait(&pool->work, &pool->mu);
        if (pool->stop)
            break;
        pool_node *n;
        int idle = 0;
        if (pick == 1) {
            n = pool->uhead;
            pool->uhead = n->next;
            if (!pool->uhead)
                pool->utail = NULL;
        } else if (pick == 0) {
            n = pool->head;
            pool->head = n->next;
            if (!pool->head)
                pool->tail = NULL;
        } else {
            n = pool->ihead;
            pool->ihead = n->next;
            if (!pool->ihead)
                pool->itail = NULL;
            idle = 1;
            pool->idle_running++;
            pool->idle_queued--;
        }
        tn_job *job = n->job, in = *job;   /* the inputs: the owner may detach */
        pthread_mutex_unlock(&pool->mu);
        free(n);
        double t0 = tn_now();
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status st = tpl_compile(in.fam, in.cfg, in.arch, &cubin, &size, &log);
        double ms = (tn_now() - t0) * 1000.0;

        pthread_mutex_lock(&pool->mu);
        for (pool_detached **d = &pool->running; *d; d = &(*d)->next)
            if ((*d)->job == job) {  /* let go meanwhile: into its copy */
                pool_detached *moved = *d;
                *d = moved->next;
                moved->next = pool->finished;
                pool->finished = moved;
                job = moved->copy;
                break;
            }
        job->status = st;
        job->cubin = cubin;
        job->cubin_size = size;
        job->log = log;
        job->compile_ms = ms;
        job->done = 1;
        if (idle) {
            pool->idle_running--;
            pthread_cond_signal(&pool->work);
        }
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
    tn_cond_init_monotonic(&pool->done);   /* tn_pool_wait_until's deadlines */
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&pool->threads[i], NULL, pool_thread, pool) != 0)
            break;
        pool->n_threads++;
    }
    if (pool->n_threads == 0) {
        tn_pool_destroy(pool);
        return NULL;
    }
    pool->idle_max = tn_pool_idle_cap(pool->n_threads);
    return pool;
}

/* Queues a job: urgent 1 ahead of every normal job, 0 normal, -1 idle-time. */
static void pool_enqueue(tn_pool *pool, tn_job *job, int urgent)
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
    pool_node **head = urgent > 0 ? &pool->uhead : urgent < 0 ? &pool->ihead : &pool->head;
    pool_node **tail = urgent > 0 ? &pool->utail : urgent < 0 ? &pool->itail : &pool->tail;
    if (*tail)
        (*tail)->next = n;
    else
        *head = n;
    *tail = n;
    pool->idle_queued += urgent < 0;
    pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->mu);
}

void tn_pool_submit(tn_pool *pool, tn_job *job)
{
    pool_enqueue(pool, job, 0);
}

void tn_pool_submit_urgent(tn_pool *pool, tn_job *job)
{
    pool_enqueue(pool, job, 1);
}

void tn_pool_submit_idle(tn_pool *pool, tn_job *job)
{
    pool_enqueue(pool, job, -1);
}

int tn_pool_idle_pending(tn_pool *pool)
{
    pthread_mutex_lock(&pool->mu);
    int n = pool->idle_queued + pool->idle_running;
    pthread_mutex_unlock(&pool->mu);
    return n;
}

int tn_pool_poll(tn_pool *pool, tn_job *job)
{
    pthread_mutex_lock(&pool->mu);
    int done = job->done;
    pthread_mutex_unlock(&pool->mu);
    return done;
}

int tn_pool_cancel(tn_pool *pool, tn_job *job)
{
    int removed = 0;
    pthread_mutex_lock(&pool->mu);
    for (int q = 0; q < 3 && !removed; q++) {
        pool_node **head = q == 2 ? &pool->ihead : q ? &pool->uhead : &pool->head;
        pool_node **tail = q == 2 ? &pool->itail : q ? &pool->utail : &pool->tail;
        pool_node *prev = NULL;
        for (pool_node *n = *head; n; prev = n, n = n->next) {
            if (n->job != job)
                continue;
            if (prev)
                prev->next = n->next;
            else
                *head = n->next;
            if (*tail == n)
                *tail = prev;
            free(n);
            pool->idle_queued -= q == 2;
            removed = 1;
            break;
        }
    }
    pthread_mutex_unlock(&pool->mu);
    return removed;
}

/* Moves a queued job to the urgent queue (no-op once it started). */
void tn_pool_promote(tn_pool *pool, tn_job *job)
{
    if (tn_pool_cancel(pool, job))
        pool_enqueue(pool, job, 1);
}

int tn_pool_detach(tn_pool *pool, tn_job *job)
{
    if (tn_pool_cancel(pool, job))
        return 1;
    pthread_mutex_lock(&pool->mu);
    int done = job->done;
    pool_detached *d = done ? NULL : malloc(sizeof *d);
    tn_job *copy = d ? malloc(sizeof *copy) : NULL;
    if (copy) {
        *copy = *job;
        d->job = job;
        d->copy = copy;
        d->next = pool->running;
        pool->running = d;
    } else {
        free(d);
        d = NULL;
    }
    pthread_mutex_unlock(&pool->mu);
    if (!done && !d)
        tn_pool_wait(pool, job);     /* out of memory: the old way */
    return d ? 2 : 0;
}

tn_job *tn_pool_take_detached(tn_pool *pool)
{
    pthread_mutex_lock(&pool->mu);
    pool_detached *d = pool->finished;
    if (d)
        pool->finished = d->next;
    pthread_mutex_unlock(&pool->mu);
    if (!d)
        return NULL;
    tn_job *job = d->copy;
    free(d);
    return job;
}

/* Frees a list of detached jobs and their results. */
static void free_detached(pool_detached *d)
{
    while (d) {
        pool_detached *next = d->next;
        free(d->copy->cubin);
        free(d->copy->log);
        free(d->copy);
        free(d);
        d = next;
    }
}

void tn_pool_wait(tn_pool *pool, tn_job *job)
{
    pthread_mutex_lock(&pool->mu);
    while (!job->done)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

int tn_pool_wait_until(tn_pool *pool, tn_job *job, double deadline)
{
    struct timespec at = tn_abstime(deadline);
    pthread_mutex_lock(&pool->mu);
    int rc = 0;
    while (!job->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&pool->done, &pool->mu, &at);
    int done = job->done;
    pthread_mutex_unlock(&pool->mu);
    return done;
}

void tn_pool_wait_detached(tn_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->mu);
    while (pool->running)
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
    while (pool->uhead) {
        pool_node *n = pool->uhead;
        pool->uhead = n->next;
        free(n);
    }
    while (pool->ihead) {
        pool_node *n = pool->ihead;
        pool->ihead = n->next;
        free(n);
    }
    pool->tail = pool->utail = pool->itail = NULL;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_threads; i++)
        pthread_join(pool->threads[i], NULL);
    free_detached(pool->running);    /* none left running after the joins */
    free_detached(pool->finished);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->work);
    pthread_cond_destroy(&pool->done);
    free(pool);
}
