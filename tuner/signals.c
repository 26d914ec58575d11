/* signals.c: the run's signal handling, in one place: ^C and SIGTERM are
 * counted (the second one kills every worker's process group), SIGPIPE is
 * ignored while a run holds workers. */
#include <signal.h>
#include <string.h>
#include "tune_core.h"

volatile sig_atomic_t tn_interrupts;
volatile pid_t tn_worker_pids[TN_MAX_DEVICES];

static void tn_on_signal(int sig)
{
    (void)sig;
    tn_interrupts++;
    for (int i = 0; tn_interrupts >= 2 && i < TN_MAX_DEVICES; i++)
        if (tn_worker_pids[i] > 0)
            kill(-tn_worker_pids[i], SIGKILL);   /* second ^C: stop now */
}

void tn_signals_catch(tn_signals *s)
{
    tn_interrupts = 0;
    memset((void *)tn_worker_pids, 0, sizeof tn_worker_pids);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tn_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &s->old_pipe);
}

void tn_signals_restore(const tn_signals *s)
{
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
    sigaction(SIGPIPE, &s->old_pipe, NULL);
}
