/* lookup.h: the lookup chain that picks a configuration for a call: exact
 * tuned shape -> the best predicted stored winner of another shape on this
 * device -> the same on a device of the same architecture -> built-in
 * default. Needs no GPU. */
#ifndef LOOKUP_H
#define LOOKUP_H

#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "tpl.h"

/* How many of the fastest results of each tuned problem the nearest-shape
 * levels choose among (db_candidates' per_problem); `autotune gc` keeps
 * the cubins of all of them. */
#define LK_PER_PROBLEM 4

/* Chooses the configuration for (fam, problem) on device dev, from d (may
 * be NULL: defaults only). The exact level takes the fastest result of the
 * problem measured on dev or on any GPU of its model (same name, compute
 * capability and memory: GPUs that split a search are one). Fills cfg and its text (TPL_CONFIG_LEN) and
 * returns the level used, or AT_LOOKUP_NONE if no configuration is usable
 * (e.g. deterministic mode and no deterministic configuration). Only
 * configurations legal on dev, applicable to the problem and (when
 * deterministic) reproducible are taken. Below the exact level it serves
 * lk_rank's first over all of d's winners of the architecture. */
at_lookup_level lk_choose(db *d, const at_device_info *dev, const tpl_family *fam,
                          const tpl_problem *problem, int deterministic, int *cfg,
                          char *config);

/* A stored winner of another shape that the runtime may serve or time on
 * a caller's calls (api.c's trial): its configuration, parsed and as text. */
typedef struct lk_candidate {
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    double distance;             /* lk_shape_distance to the problem */
    double predicted_ms;         /* md_predict_ms at the problem; NAN: no model */
    int own;                     /* measured on this device or a GPU of its model */
    int layer;                   /* the database it came from (lk_choose_layers' dbs index) */
} lk_candidate;

/* The selection: the usable (as lk_choose's) stored results among cands[0..n)
 * of p's kind, one per configuration (predicted from the nearest shape it
 * was measured at), best first: those measured on dev itself, then by the
 * selection model's predicted time at p (runtime/model.h), then by shape
 * distance (families without a model: nearest first). *out is malloc'd (caller frees; NULL for none); returns
 * the count, -1 if out of memory. */
int lk_rank(const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
            int deterministic, const db_result *cands, int n, lk_candidate **out);

/* Reorders a ranked list so that each tile geometry (tile_of: tile,
 * split-K, stream-K, products per block) comes once before any repeats,
 * each in its ranked order: a trial's few candidates then differ where the
 * model is least sure (wave tails, split-K) instead of in details. A family
 * without tile_of keeps its order. */
void lk_diversify(const tpl_family *fam, lk_candidate *list, int n);

/* Up to max distinct configurations among the fastest stored results of
 * other problems of p's kind in every database of dbs[0..n_dbs) (NULLs
 * skipped), measured on any device of dev's architecture, as one list in
 * lk_rank's order (this device's and its model's first) through lk_diversify, each usable as lk_choose's are and with its
 * cubin for dev's architecture already stored in one of the databases (a
 * trial never compiles). Returns how many were written to out (0 without
 * databases, on any database error, or when none qualifies). */
int lk_nearby_layers(db *const *dbs, int n_dbs, const at_device_info *dev,
                     const tpl_family *fam, const tpl_problem *p, int deterministic, int max,
                     lk_candidate *out);
/* lk_nearby_layers over the one database d (0 where d is NULL). */
int lk_nearby(db *d, const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
              int deterministic, int max, lk_candidate *out);

/* Opens the database a handle reads (path as at_create got it, resolved):
 * created where missing (it is also the cubin cache), read-only where it
 * cannot be written (lookups only: the handle never writes to it). On
 * AT_ERR_DB_CORRUPT (not a tuning database: at_create refuses it) and on
 * any other failure *out is NULL and msg says why; the caller then uses
 * built-in defaults. */
at_status lk_open_db(const char *path, db **out, char *msg, size_t len);

/* The same over several databases (the user's first, then the shipped
 * read-only ones; NULL entries skipped): an exact tuned problem in any of
 * them wins (the earliest database's); else the stored winners of other
 * shapes of every database compete in one ranking (lk_rank's order: those
 * measured on dev or its model first, then by predicted time, so a user's few
 * tuned shapes never hide a shipped grid's better fit; without a model, by
 * distance), served at the NEAREST level when measured on dev or its model,
 * else ARCH. *which is the index of the database that served, -1 for
 * a built-in default or none. With n 0 it is lk_choose(NULL, ...). */
at_lookup_level lk_choose_layers(db *const *dbs, int n, const at_device_info *dev,
                                 const tpl_family *fam, const tpl_problem *problem,
                                 int deterministic, int *cfg, char *config, int *which);

/* Opens each read-only database of list (paths separated by ':', in that
 * order) as shipped (db_open's DB_OPEN_SHIPPED: never written, no side
 * files) into layers[*n], layers[*n + 1], ... while *n < max. One that
 * cannot be used (missing, corrupt, not a tuning database) is skipped and
 * named in msg ("" if none was), never fatal. */
void lk_open_shipped(const char *list, db **layers, int *n, int max, char *msg, size_t len);

/* Sum over the dimensions and the batch count of |log(a_i / b_i)|: 0 for
 * the same problem; INFINITY for problems of another kind (element type,
 * math, ops, order), dimension count or batch class (a batch against a single
 * product), which never serve each other. */
double lk_shape_distance(const tpl_problem *a, const tpl_problem *b);

/* The family that runs a problem several families accept (every GEMM call): among
 * fams[0..n) those that accept p, the one whose stored best for exactly p on this device
 * (current source; deterministic when asked) is fastest; *measured = 1. When none of them
 * has a measurement of p (*measured = 0), a rule: products with m, n and k all at most
 * LK_SMALL_GEMM go to the family named "bgemm" (several small products per block) where it
 * is in fams; then the first family in fams whose claims hook takes p (smallm's, then skinny's
 * shape classes: lk_gemm_families lists them in registry order); else the first other
 * accepting family in fams (matmul, tcgemm, dgemm), else bgemm. NULL if no family in fams
 * accepts p. d may be NULL (the rule only). */
#define LK_SMALL_GEMM 128
const tpl_family *lk_choose_family(db *d, const at_device_info *dev, const tpl_problem *p,
                                   int deterministic, const tpl_family *const *fams, int n,
                                   int *measured);
/* lk_choose_family over the layers in order (the user's database, then the read-only ones;
 * NULL entries skipped): the first layer with a measurement of p decides, else the rule; but a
 * shape the rule gives to a claiming family (skinny) stays with a large-tile family that has a
 * usable stored result within LK_NEAR_SHAPE of it in some layer (its tuned winner nearby is
 * likelier right than a built-in default; a far one, such as a 4096^3 winner for a GEMV, is
 * not). */
/* The large-tile family of a GEMM problem's type: "dgemm" for FP64, "matmul" for exact FP32,
 * "tcgemm" for BF16, FP16 and TF32 math. */
const char *lk_gemm_main_family(const tpl_problem *p);
/* The families a GEMM call of p may run (the candidates of the runtime's family choice and
 * what the tuner measures for a recorded call): main_kernel's family (NULL: p's type's, as
 * lk_gemm_main_family) first, then every family with a claims hook, then bgemm for a batch,
 * whether or not they accept p (lk_choose_family checks). At most max into out; the count. */
int lk_gemm_families(const tpl_problem *p, const char *main_kernel, const tpl_family **out,
                     int max);
#define LK_NEAR_SHAPE 0.7           /* lk_shape_distance: about 2x in one size, 1.26x in three */
const tpl_family *lk_choose_family_layers(db *const *layers, int n_layers,
                                          const at_device_info *dev, const tpl_problem *p,
                                          int deterministic, const tpl_family *const *fams, int n,
                                          int *measured);

#endif
