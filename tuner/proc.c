/* proc.c: the worker process seen from the parent: spawn it (this program
 * in worker mode, or $AUTOTUNE_WORKER) with two pipes, kill and reap it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tn.h"

/* In the child: moves fd to target (dup2 handles both orders safely). */
static int child_place(int fd, int target)
{
    if (fd == target) {
        int fl = fcntl(fd, F_GETFD);
        return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
    return dup2(fd, target) < 0 ? -1 : 0;
}

at_status tn_proc_start(tn_proc *p, char *err, size_t errlen)
{
    int to_child[2], from_child[2];
    const char *cmd = getenv("AUTOTUNE_WORKER");
    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->to_fd = p->from_fd = -1;
    char shell_cmd[1100];
    if (cmd && *cmd) {
        snprintf(p->command, sizeof p->command, "%s", cmd);
        /* exec: the worker replaces the shell, so kills and exits are its own */
        snprintf(shell_cmd, sizeof shell_cmd, "exec %.1000s", cmd);
    }
    else
        snprintf(p->command, sizeof p->command, "/proc/self/exe __worker");
    if (pipe2(to_child, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe failed: %s", strerror(errno));
        return AT_ERR_IO;
    }
    if (pipe2(from_child, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe failed: %s", strerror(errno));
        close(to_child[0]);
        close(to_child[1]);
        return AT_ERR_IO;
    }
    /* fd numbers the child needs must not collide with 3/4 in a bad order:
     * move the read end of to_child and the write end of from_child high. */
    int in_fd = fcntl(to_child[0], F_DUPFD_CLOEXEC, 10);
    int out_fd = fcntl(from_child[1], F_DUPFD_CLOEXEC, 10);
    close(to_child[0]);
    close(from_child[1]);
    if (in_fd < 0 || out_fd < 0) {
        snprintf(err, errlen, "fcntl failed: %s", strerror(errno));
        if (in_fd >= 0) close(in_fd);
        if (out_fd >= 0) close(out_fd);
        close(to_child[1]);
        close(from_child[0]);
        return AT_ERR_IO;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork failed: %s", strerror(errno));
        close(in_fd);
        close(out_fd);
        close(to_child[1]);
        close(from_child[0]);
        return AT_ERR_IO;
    }
    if (pid == 0) {
        /* child: own process group, dies with the parent, fds 3 and 4 */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_DFL);
        if (child_place(in_fd, 3) != 0 || child_place(out_fd, 4) != 0)
            _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        dup2(2, 1);                  /* stray prints go to stderr */
        if (cmd && *cmd) {
            execl("/bin/sh", "sh", "-c", shell_cmd, (char *)NULL);
        } else {
            execl("/proc/self/exe", "autotune", "__worker", (char *)NULL);
        }
        _exit(127);
    }
    setpgid(pid, pid);               /* either side may win the race */
    close(in_fd);
    close(out_fd);
    p->pid = pid;
    p->to_fd = to_child[1];
    p->from_fd = from_child[0];
    return AT_OK;
}

static void describe_status(int wstatus, char *how, size_t howlen)
{
    if (WIFSIGNALED(wstatus))
        snprintf(how, howlen, "killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else if (WIFEXITED(wstatus))
        snprintf(how, howlen, "exit status %d", WEXITSTATUS(wstatus));
    else
        snprintf(how, howlen, "ended (status 0x%x)", wstatus);
}

static void close_fds(tn_proc *p)
{
    if (p->to_fd >= 0)
        close(p->to_fd);
    if (p->from_fd >= 0)
        close(p->from_fd);
    p->to_fd = p->from_fd = -1;
}

void tn_proc_kill(tn_proc *p, char *how, size_t howlen)
{
    if (how && howlen)
        how[0] = '\0';
    if (p->pid <= 0) {
        close_fds(p);
        return;
    }
    /* If it already died on its own, report how; else kill it. */
    int wstatus = 0;
    pid_t r = waitpid(p->pid, &wstatus, WNOHANG);
    if (r == 0) {
        /* give a dying worker a moment to finish dying */
        for (int i = 0; i < 20 && r == 0; i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
            r = waitpid(p->pid, &wstatus, WNOHANG);
        }
    }
    if (r == 0) {
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        while ((r = waitpid(p->pid, &wstatus, 0)) < 0 && errno == EINTR)
            ;
    } else {
        kill(-p->pid, SIGKILL);      /* leftovers of its group, if any */
    }
    if (r == p->pid && how && howlen)
        describe_status(wstatus, how, howlen);
    close_fds(p);
    p->pid = -1;
}

int tn_proc_alive(const tn_proc *p)
{
    if (p->pid <= 0)
        return 0;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    /* WNOWAIT: a dead worker stays a zombie for tn_proc_kill to reap */
    if (waitid(P_PID, (id_t)p->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == EINTR;
    return info.si_pid == 0;
}

void tn_proc_stop(tn_proc *p)
{
    if (p->pid <= 0) {
        close_fds(p);
        return;
    }
    tn_msg quit;
    memset(&quit, 0, sizeof quit);
    quit.type = TN_MSG_QUIT;
    tn_msg_send(p->to_fd, &quit);
    close_fds(p);
    int wstatus;
    pid_t r = 0;
    for (int i = 0; i < 100 && r == 0; i++) {
        r = waitpid(p->pid, &wstatus, WNOHANG);
        if (r == 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (r == 0) {
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        while (waitpid(p->pid, &wstatus, 0) < 0 && errno == EINTR)
            ;
    }
    p->pid = -1;
}
