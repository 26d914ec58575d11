/* autotune_mpi.c: `autotune-mpi`, the MPI front end (built only where
 * mpicc exists): one rank per GPU, the ranks of one GPU model split the
 * problems between them, each tunes into its own database through the
 * tuner's code, and rank 0 merges every rank's database into -o OUT.db. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "strategy.h"
#include "tn.h"

#define MPI_USAGE 2
#define MPI_CHUNK (64 << 20)           /* bytes per message when a database travels */
#define MPI_TAG_SIZE 11
#define MPI_TAG_DATA 12

static const char usage_text[] =
    "usage: mpirun -n N autotune-mpi -o OUT.db [--force] [--work DIR] [--kernel NAME[,NAME]]\n"
    "                    [--size SIZE] [--budget B] [--strategy S] [--timeout S]\n"
    "                    [--seed N] [--jobs N]\n"
    "One rank per GPU: a rank tunes GPU L, L its rank among the ranks of its node.\n"
    "The ranks whose GPUs are of one model split the problems (the defaults of\n"
    "the selected kernels, or --size) between them; each tunes its share into\n"
    "DIR/HOST-gpuL.db (DIR: --work, default OUT.db.parts; a rerun resumes) with\n"
    "its log in DIR/HOST-gpuL.log; rank 0 then receives every rank's database\n"
    "and merges them into OUT.db (autotune merge's rules: nothing lost, the best\n"
    "per device and problem kept). OUT.db must not exist unless --force.\n"
    "Without --budget each guided problem gets a single problem's default\n"
    "(120 evaluations or 20 s). Exit status: 0 ok, 1 failure, 2 usage, 130 ^C.\n";

typedef struct mpi_opts {
    const char *out, *work;
    int force;
    tn_options tune;                 /* what every item shares */
} mpi_opts;

/* What each rank tells the others about its GPU. */
typedef struct mpi_gpu {
    char model[256];
    char uuid[48];
    int ok;                          /* 1 if the GPU answered */
    int local;                       /* its ordinal on the node */
} mpi_gpu;

static int mpi_usage(int rank, const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "autotune-mpi: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n%s", usage_text);
    }
    return MPI_USAGE;
}

/* "--name value" / "--name=value" at argv[*i]; 1 with *v (NULL if the
 * value is missing) if it matched. */
static int opt(int argc, char **argv, int *i, const char *name, const char **v)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0 || (argv[*i][n] && argv[*i][n] != '='))
        return 0;
    *v = argv[*i][n] == '=' ? argv[*i] + n + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

/* "a,b" into t's families; 1 if a name is unknown or none is given. */
static int parse_kernels(const char *list, tn_options *t)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *s = NULL, *k = strtok_r(buf, ",", &s); k; k = strtok_r(NULL, ",", &s)) {
        const tpl_family *f = tpl_find(k);
        if (!f || t->n_families >= 31)
            return 1;
        t->families[t->n_families++] = f;
    }
    return t->n_families == 0;
}

/* Parses the command line into o; 0, or an exit status after a message. */
static int parse(int argc, char **argv, int rank, mpi_opts *o)
{
    const char *v = NULL;
    for (int i = 1; i < argc; i++) {
        tn_options *t = &o->tune;
        int bad = 0;
        if (strcmp(argv[i], "--force") == 0) {
            o->force = 1;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0)
            return mpi_usage(rank, "%s", "help");
        if (opt(argc, argv, &i, "-o", &v)) {
            o->out = v;
            bad = !v;
        } else if (opt(argc, argv, &i, "--work", &v)) {
            o->work = v;
            bad = !v;
        } else if (opt(argc, argv, &i, "--kernel", &v)) {
            bad = parse_kernels(v, t);
        } else if (opt(argc, argv, &i, "--size", &v)) {
            bad = !v || tn_parse_size(v, &t->size) != 0;
            t->have_size = 1;
        } else if (opt(argc, argv, &i, "--budget", &v)) {
            bad = !v || tn_parse_budget(v, &t->budget_s, &t->budget_evals) != 0;
        } else if (opt(argc, argv, &i, "--strategy", &v)) {
            const tn_strategy *st = v ? tn_strategy_find(v) : NULL;
            bad = !st;
            t->strategy = st ? st->name : NULL;
        } else if (opt(argc, argv, &i, "--timeout", &v)) {
            bad = !v || (t->timeout_s = atof(v)) <= 0;
        } else if (opt(argc, argv, &i, "--seed", &v)) {
            bad = !v || !*v;
            t->seed = v ? strtoull(v, NULL, 10) : 0;
        } else if (opt(argc, argv, &i, "--jobs", &v)) {
            bad = !v || (t->jobs = atoi(v)) < 1 || t->jobs > 256;
        } else {
            return mpi_usage(rank, "unknown option '%s'", argv[i]);
        }
        if (bad)
            return mpi_usage(rank, "bad value for %s", argv[i]);
    }
    if (!o->out)
        return mpi_usage(rank, "needs -o OUT.db%s", "");
    return 0;
}

/* ---- the GPU of this rank ---- */

/* Asks a worker (the tuner's, $AUTOTUNE_WORKER in tests) which GPU device
 * is; g->ok 0 with the reason printed if none answers. */
static void probe_gpu(int device, mpi_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->local = device;
    tn_proc p;
    char err[1024];
    if (tn_proc_start(&p, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune-mpi: cannot start a worker: %s\n", err);
        return;
    }
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_OPEN;
    m.device = device;
    memset(&r, 0, sizeof r);
    if (tn_msg_send(p.to_fd, &m) == AT_OK && tn_msg_recv(p.from_fd, &r, 60, err, sizeof err) == AT_OK &&
        r.type == TN_MSG_HELLO && r.status == AT_OK) {
        snprintf(g->model, sizeof g->model, "%s", r.dev.name);
        snprintf(g->uuid, sizeof g->uuid, "%s", r.dev.uuid);
        g->ok = 1;
    } else {
        fprintf(stderr, "autotune-mpi: no GPU %d here: %s\n", device, r.text[0] ? r.text : err);
    }
    tn_msg_free(&r);
    tn_proc_stop(&p);                /* sends the one QUIT: a second raced the worker's exit */
}

/* ---- the problems ---- */

typedef struct mpi_item {
    const tpl_family *fam;
    tpl_problem problem;
} mpi_item;

/* Every (family, problem) of the run, in the registry's order; malloc'd. */
static int list_items(const tn_options *t, mpi_item **out)
{
    int n = 0, cap = 64;
    mpi_item *items = malloc((size_t)cap * sizeof *items);
    for (int i = 0; items && i < tpl_family_count(); i++) {
        const tpl_family *f = tpl_family_at(i);
        int want = t->n_families == 0 ? !f->hidden : 0;
        for (int k = 0; k < t->n_families; k++)
            want |= t->families[k] == f;
        if (!want)
            continue;
        const tpl_problem *list = t->have_size ? &t->size : f->tuning_problems;
        int count = t->have_size ? tpl_family_accepts(f, &t->size) : f->n_tuning_problems;
        for (int k = 0; k < count; k++) {
            if (n == cap) {
                mpi_item *more = realloc(items, (size_t)(cap *= 2) * sizeof *items);
                if (!more) {
                    free(items);
                    return -1;
                }
                items = more;
            }
            items[n].fam = f;
            items[n++].problem = list[k];
        }
    }
    *out = items;
    return items ? n : -1;
}

/* 1 if rank r tunes: its GPU answered and no lower rank has the same one. */
static int tunes(const mpi_gpu *all, int r)
{
    if (!all[r].ok)
        return 0;
    for (int q = 0; q < r; q++)
        if (all[q].ok && strcmp(all[q].uuid, all[r].uuid) == 0)
            return 0;
    return 1;
}

/* This rank's place among the tuning ranks of its GPU's model: *index of
 * *count, or *count 0 if it tunes nothing. */
static void model_group(const mpi_gpu *all, int n_ranks, int rank, int *index, int *count)
{
    *index = *count = 0;
    if (!tunes(all, rank))
        return;
    for (int r = 0; r < n_ranks; r++) {
        if (!tunes(all, r) || strcmp(all[r].model, all[rank].model) != 0)
            continue;
        if (r == rank)
            *index = *count;
        (*count)++;
    }
}

/* ---- tuning this rank's share ---- */

/* Tunes items index, index + count, ... into db_path, the tuner's output
 * going to log_path; prints one line per item. The exit status: 0, 1 if
 * an item failed, 130 if interrupted (the rest is left). */
static int tune_share(const mpi_opts *o, const mpi_item *items, int n_items, int index,
                      int count, int device, const char *db_path, const char *log_path,
                      int rank)
{
    int rc = 0, n_done = 0;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    FILE *log = fopen(log_path, "a");
    for (int i = index; count > 0 && i < n_items && rc != 130; i += count) {
        tn_options t = o->tune;
        t.device = device;
        t.families[0] = items[i].fam;
        t.families[1] = NULL;
        t.n_families = 1;
        t.have_size = 1;
        t.size = items[i].problem;
        t.db_path = db_path;
        t.quiet = 1;
        snprintf(t.command, sizeof t.command, "autotune-mpi rank %d: %s", rank, items[i].fam->name);
        if (log && saved >= 0)
            dup2(fileno(log), STDOUT_FILENO);
        int r = tn_tune(&t);
        fflush(stdout);
        if (log && saved >= 0)
            dup2(saved, STDOUT_FILENO);
        char size[64];
        tn_format_size(&items[i].problem, size, sizeof size);
        printf("rank %d (GPU %d): %s %s %s\n", rank, device, items[i].fam->name, size,
               r == 0 ? "tuned" : r == 130 ? "interrupted" : "failed (see the log)");
        fflush(stdout);
        rc = r == 130 ? 130 : r != 0 ? 1 : rc;
        n_done++;
    }
    if (log)
        fclose(log);
    if (saved >= 0)
        close(saved);
    (void)n_done;
    return rc;
}

/* ---- bringing the databases to rank 0 ---- */

/* Sends the file at path to rank 0 (its size first, 0 if there is none). */
static void send_db(const char *path)
{
    FILE *f = fopen(path, "rb");
    long long size = 0;
    char *buf = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size)) && fread(buf, 1, (size_t)size, f) != (size_t)size)
        size = 0;
    if (f)
        fclose(f);
    if (!buf)
        size = 0;
    MPI_Send(&size, 1, MPI_LONG_LONG, 0, MPI_TAG_SIZE, MPI_COMM_WORLD);
    for (long long off = 0; off < size; off += MPI_CHUNK) {
        int n = (int)(size - off < MPI_CHUNK ? size - off : MPI_CHUNK);
        MPI_Send(buf + off, n, MPI_BYTE, 0, MPI_TAG_DATA, MPI_COMM_WORLD);
    }
    free(buf);
}

/* Receives rank r's database into path; 1 if it has one, 0 if it sent
 * none, -1 if it could not be written. */
static int recv_db(int r, const char *path)
{
    long long size = 0;
    MPI_Recv(&size, 1, MPI_LONG_LONG, r, MPI_TAG_SIZE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *buf = size > 0 ? malloc((size_t)(size < MPI_CHUNK ? size : MPI_CHUNK)) : NULL;
    FILE *f = size > 0 ? fopen(path, "wb") : NULL;
    int ok = size > 0 && buf && f;
    for (long long off = 0; off < size; off += MPI_CHUNK) {
        int n = (int)(size - off < MPI_CHUNK ? size - off : MPI_CHUNK);
        MPI_Recv(buf ? buf : (char *)&size, buf ? n : 0, MPI_BYTE, r, MPI_TAG_DATA,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (ok)
            ok = fwrite(buf, 1, (size_t)n, f) == (size_t)n;
    }
    if (f && fclose(f) != 0)
        ok = 0;
    free(buf);
    return size == 0 ? 0 : ok ? 1 : -1;
}

/* Merges the database at path into out; 0, or 1 after a message. */
static int merge_one(db *out, const char *path, const char *what)
{
    char err[1024];
    db *in = NULL;
    db_merge_stats st;
    memset(&st, 0, sizeof st);
    /* as shipped: nothing is written, not even a side file beside it */
    if (db_open(&in, path, DB_OPEN_SHIPPED, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune-mpi: cannot read %s (%s): %s\n", path, what, err);
        return 1;
    }
    int rc = 0;
    if (db_merge(out, in, &st) != AT_OK) {
        fprintf(stderr, "autotune-mpi: merging %s failed: %s\n", what, db_errmsg(out));
        rc = 1;
    } else {
        printf("merged %s: %lld results, %lld devices\n", what, st.results_read, st.devices);
    }
    db_close(in);
    return rc;
}

/* Rank 0: its own database and every other rank's, merged into a new
 * database renamed to o->out at the end. 0, or 1 after a message. */
static int gather_and_merge(const mpi_opts *o, const char *own, int n_ranks)
{
    char tmp[4200], recv[4300], err[1024], what[64];
    snprintf(tmp, sizeof tmp, "%s.merge-%ld", o->out, (long)getpid());
    db *out = NULL;
    int rc = 0;
    if (db_open(&out, tmp, DB_OPEN_CREATE, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune-mpi: cannot create %s: %s\n", tmp, err);
        rc = 1;
    }
    struct stat sb;
    if (out && stat(own, &sb) == 0)
        rc |= merge_one(out, own, "rank 0");
    for (int r = 1; r < n_ranks; r++) {
        snprintf(recv, sizeof recv, "%s/received-rank-%d.db", o->work, r);
        snprintf(what, sizeof what, "rank %d", r);
        int got = recv_db(r, recv);
        if (got < 0) {
            fprintf(stderr, "autotune-mpi: cannot write %s: %s\n", recv, strerror(errno));
            rc = 1;
        } else if (got > 0 && out) {
            rc |= merge_one(out, recv, what);
        }
        unlink(recv);
    }
    if (out && rc == 0)
        rc = tn_merge_cubins(out, NULL, 0, 0);   /* cubins are never copied: compiled here */
    if (out && rc == 0 && db_checkpoint(out) != AT_OK)
        rc = 1;
    if (out && rc == 0)
        tn_print_db_size(out, 0);
    db_close(out);
    char side[4300];
    snprintf(side, sizeof side, "%s-wal", o->out);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", o->out);
    unlink(side);
    if (rc == 0 && rename(tmp, o->out) != 0) {
        fprintf(stderr, "autotune-mpi: cannot rename %s: %s\n", tmp, strerror(errno));
        rc = 1;
    }
    if (rc != 0)
        unlink(tmp);
    else
        printf("wrote %s\n", o->out);
    return rc;
}

/* ---- main ---- */

/* This rank: its node-local ordinal, its GPU, its share, its database. */
static int run_rank(const mpi_opts *o, int rank, int n_ranks, char *own, size_t own_len)
{
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    int node_ranks = 1;
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
    mpi_gpu mine, *all = calloc((size_t)n_ranks, sizeof *all);
    probe_gpu(local, &mine);
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    int index = 0, count = 0;
    model_group(all, n_ranks, rank, &index, &count);
    free(all);
    mpi_item *items = NULL;
    int n_items = list_items(&o->tune, &items);
    char host[256] = "host", log_path[4400];
    gethostname(host, sizeof host - 1);
    snprintf(own, own_len, "%s/%s-gpu%d.db", o->work, host, local);
    snprintf(log_path, sizeof log_path, "%s/%s-gpu%d.log", o->work, host, local);
    mpi_opts mo = *o;
    if (mo.tune.jobs == 0)
        mo.tune.jobs = tn_cpu_count() / node_ranks > 0 ? tn_cpu_count() / node_ranks : 1;
    if (count > 0)
        printf("rank %d: GPU %d, %s (%s), problems %d, %d + %d, ... of %d\n", rank, local,
               mine.model, mine.uuid, index, index, count, n_items);
    else
        printf("rank %d: GPU %d %s: tunes nothing\n", rank, local,
               mine.ok ? "is another rank's" : "did not answer");
    fflush(stdout);
    int rc = n_items < 0 ? 1 : tune_share(&mo, items, n_items, index, count, local, own,
                                          log_path, rank);
    free(items);
    /* a rank without a GPU is a failure of the run (more ranks than GPUs);
     * one whose GPU another rank tunes is not */
    return mine.ok ? rc : 1;
}

int main(int argc, char **argv)
{
    /* the tuner's worker runs as this program (/proc/self/exe __worker) */
    if (argc > 1 && (strcmp(argv[1], "__worker") == 0 || strcmp(argv[1], "__fake_worker") == 0))
        return tn_main(argc, argv);
    MPI_Init(&argc, &argv);
    /* Workers are child processes behind pipes (the GPU probe, the tuner): one that exits
     * before reading its last message must give this rank EPIPE, not kill it. tn_tune
     * ignores SIGPIPE only for its own run; the probe runs outside it (its second QUIT
     * to an exiting worker killed a rank in about half of the CI runs). */
    signal(SIGPIPE, SIG_IGN);
    int rank = 0, n_ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    mpi_opts o;
    memset(&o, 0, sizeof o);
    /* the seed: --seed, else rank 0's clock, the same on every rank */
    unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    o.tune.seed = seed;
    int rc = parse(argc, argv, rank, &o);
    char work[4200];
    if (rc == 0 && !o.work) {
        snprintf(work, sizeof work, "%s.parts", o.out);
        o.work = work;
    }
    struct stat sb;
    if (rc == 0 && rank == 0 && stat(o.out, &sb) == 0 && !o.force) {
        fprintf(stderr, "autotune-mpi: %s exists; choose a new name or add --force\n", o.out);
        rc = 1;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != 0) {
        MPI_Finalize();
        return rc;
    }
    if (mkdir(o.work, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "autotune-mpi: cannot create %s: %s\n", o.work, strerror(errno));
        rc = 1;
    }
    char own[4400] = "";
    if (rc == 0)
        rc = run_rank(&o, rank, n_ranks, own, sizeof own);
    int merged = 0;
    if (rank == 0)
        merged = gather_and_merge(&o, own, n_ranks);
    else
        send_db(own);
    int worst = rc > merged ? rc : merged;
    int all = 0;
    MPI_Allreduce(&worst, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return all;
}
