/* test_mpi.c: the MPI front end (autotune-mpi) on one machine: mpirun -n 3
 * with the fake worker; the ranks split the problems between the GPUs of
 * one model and rank 0 ends with the merged database, which must hold
 * what one GPU tuning everything holds. Skips without mpirun. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cudrv.h"
#include "db.h"
#include "harness.h"

#define MPI_KERNELS "test_oob,test_hang,test_wide"

/* The rows of the database at path (NULL on failure). */
static db_result *mpi_rows(const char *path, int *n)
{
    db *d = NULL;
    char err[512];
    db_result *r = NULL;
    *n = 0;
    if (db_open(&d, path, DB_OPEN_READONLY, err, sizeof err) != AT_OK)
        return NULL;
    if (db_results(d, NULL, NULL, &r, n) != AT_OK)
        r = NULL;
    db_close(d);
    return r;
}

static int mpi_same_problem(const db_result *a, const db_result *b)
{
    return strcmp(a->kernel, b->kernel) == 0 && tpl_problem_equal(&a->problem, &b->problem);
}

TEST(mpi_front_end_splits_and_merges)
{
    char mpi[4300], cmd[20000], build[4096], *out = NULL;
    if (!realpath(th_build_dir(), build))
        snprintf(build, sizeof build, "%s", th_build_dir());
    snprintf(mpi, sizeof mpi, "%s/autotune-mpi-test", build);
    if (th_run("command -v mpirun", &out) != 0) {
        free(out);
        th_skip("mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)");
        return;
    }
    free(out);
    if (access(mpi, X_OK) != 0) {
        th_skip("%s was not built (no mpicc when make ran)", mpi);
        return;
    }
    const char *dir = th_tmpdir();
    char env[9000];
    snprintf(env, sizeof env, "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE= "
             "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1",
             build);
    /* the reference: one GPU tunes every problem */
    snprintf(cmd, sizeof cmd, "%s %s/autotune-test --device 0 --kernel " MPI_KERNELS
             " --db '%s/single.db' --seed 5 --jobs 2 --quiet", env, build, dir);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s mpirun %s --oversubscribe -n 3 '%s' --kernel "
             MPI_KERNELS " -o out.db --seed 5 --jobs 1", dir, env,
             getuid() == 0 ? "--allow-run-as-root" : "", mpi);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "wrote out.db"), "exit %d: %s", rc, out);
    free(out);
    char path[4400];
    int n_one = 0, n_all = 0;
    snprintf(path, sizeof path, "%s/single.db", dir);
    db_result *one = mpi_rows(path, &n_one);
    snprintf(path, sizeof path, "%s/out.db", dir);
    db_result *all = mpi_rows(path, &n_all);
    CHECK(one && all && n_one > 0);
    CHECK_MSG(n_all == n_one, "%d rows merged, one GPU stored %d", n_all, n_one);
    /* each problem on one GPU, the four problems over all three GPUs */
    char used[3][48];
    int n_used = 0;
    for (int i = 0; i < n_all; i++) {
        for (int k = 0; k < n_all; k++)
            CHECK_MSG(!mpi_same_problem(&all[i], &all[k]) ||
                      strcmp(all[i].device_uuid, all[k].device_uuid) == 0,
                      "%s tuned on two GPUs", all[i].kernel);
        int seen = 0;
        for (int u = 0; u < n_used; u++)
            seen |= strcmp(used[u], all[i].device_uuid) == 0;
        if (!seen && n_used < 3)
            snprintf(used[n_used++], sizeof used[0], "%s", all[i].device_uuid);
    }
    CHECK_EQ(n_used, 3);
    /* every configuration of the single run is there, and the best of each
     * problem is the same configuration at the same time */
    for (int i = 0; i < n_one; i++) {
        const db_result *m = NULL;
        for (int k = 0; k < n_all && !m; k++)
            if (mpi_same_problem(&one[i], &all[k]) && strcmp(one[i].config, all[k].config) == 0)
                m = &all[k];
        CHECK_MSG(m != NULL, "%s %s is missing", one[i].kernel, one[i].config);
        if (strcmp(one[i].status, DB_OK) == 0 && strcmp(m->status, DB_OK) == 0)
            CHECK(one[i].time_ms == m->time_ms);
    }
    for (int i = 0; i < n_one; i++) {
        double b1 = 1e300, b2 = 1e300;
        for (int k = 0; k < n_one; k++)
            if (mpi_same_problem(&one[i], &one[k]) && strcmp(one[k].status, DB_OK) == 0)
                b1 = one[k].time_ms < b1 ? one[k].time_ms : b1;
        for (int k = 0; k < n_all; k++)
            if (mpi_same_problem(&one[i], &all[k]) && strcmp(all[k].status, DB_OK) == 0)
                b2 = all[k].time_ms < b2 ? all[k].time_ms : b2;
        CHECK_MSG(b1 == b2, "%s: best %g merged, %g on one GPU", one[i].kernel, b2, b1);
    }
    free(one);
    free(all);
    /* an existing output is kept unless --force */
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 1 && strstr(out, "exists"), "exit %d: %s", rc, out);
    free(out);
}

/* On a host with two GPUs: two ranks, the real worker; sum and dot split
 * between the GPUs when they are of one model, each tuned on its own. */
GPU_TEST(mpi_front_end_on_two_gpus)
{
    char mpi[4300], cmd[20000], build[4096], err[512], *out = NULL;
    if (!realpath(th_build_dir(), build))
        snprintf(build, sizeof build, "%s", th_build_dir());
    snprintf(mpi, sizeof mpi, "%s/autotune-mpi", build);
    at_status s;
    const cudrv *cu = cudrv_get(&s, err, sizeof err);
    int n_gpus = 0;
    if (cu)
        cu->DeviceGetCount(&n_gpus);
    if (th_run("command -v mpirun", &out) != 0 || access(mpi, X_OK) != 0 || n_gpus < 2) {
        free(out);
        th_skip("needs mpirun, %s and two GPUs (%d here)", mpi, n_gpus);
        return;
    }
    free(out);
    /* one directory for the run and the check (each th_tmpdir() call makes a new one) */
    char dir[4300];
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(cmd, sizeof cmd, "cd '%s' && OMPI_MCA_btl_vader_single_copy_mechanism=none "
             "mpirun %s -n 2 '%s' --kernel sum,dot --size 1048576 --budget 20e -o two.db "
             "--seed 3", dir, getuid() == 0 ? "--allow-run-as-root" : "", mpi);
    int rc = th_run(cmd, &out);
    printf("%s", out ? out : "");
    CHECK_MSG(rc == 0 && strstr(out, "wrote two.db"), "exit %d", rc);
    free(out);
    char path[4400];
    int n = 0;
    snprintf(path, sizeof path, "%s/two.db", dir);
    db_result *r = mpi_rows(path, &n);
    CHECK(r && n > 0);
    int ok_sum = 0, ok_dot = 0, two = 0;
    for (int i = 0; i < n; i++) {
        ok_sum |= strcmp(r[i].kernel, "sum") == 0 && strcmp(r[i].status, DB_OK) == 0;
        ok_dot |= strcmp(r[i].kernel, "dot") == 0 && strcmp(r[i].status, DB_OK) == 0;
        two |= strcmp(r[i].device_uuid, r[0].device_uuid) != 0;
    }
    free(r);
    CHECK(ok_sum && ok_dot && two);
}
