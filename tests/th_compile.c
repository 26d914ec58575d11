/* th_compile.c: GPU-tier test support: compiling a set of configurations on
 * several threads (th_compile.h). */
#include <pthread.h>
#include <stdlib.h>
#include "harness.h"
#include "th_compile.h"

typedef struct th_queue {
    th_compiled *set;
    int n, next;
    pthread_mutex_t lock;
} th_queue;

static void *th_compile_worker(void *arg)
{
    th_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int i = q->next++;
        pthread_mutex_unlock(&q->lock);
        if (i >= q->n)
            return NULL;
        th_compiled *c = &q->set[i];
        c->status = tpl_compile(c->fam, c->cfg, c->arch, &c->cubin, &c->size, &c->log);
    }
}

int th_compile_all(th_compiled *set, int n)
{
    th_queue q = {set, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[16];
    int started = 0;
    for (int i = 0; i < (n < 16 ? n : 16); i++)
        started += pthread_create(&th[started], NULL, th_compile_worker, &q) == 0;
    if (started == 0)
        th_compile_worker(&q);          /* no thread: compile here */
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++)
        if (set[i].status != AT_OK) {
            th_fail(__FILE__, __LINE__, "%s: %s %s", set[i].text, at_status_string(set[i].status),
                    set[i].log ? set[i].log : "");
            return 0;
        }
    return 1;
}

void th_free_compiled(th_compiled *set, int n)
{
    for (int i = 0; set && i < n; i++) {
        free(set[i].cubin);
        free(set[i].log);
    }
    free(set);
}
