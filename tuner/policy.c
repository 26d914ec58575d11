/* policy.c: the run's policy, in one place: which families and problems a
 * run tunes (tn_problems_of), which of them get a second look, and the
 * ordered list of looks every GPU of the run works through. */
#include <stdio.h>
#include <stdlib.h>
#include "tune_core.h"

/* The default run time shared by the problems of guided and random
 * searches without --budget (plan.c clamps each share). */
#define TN_RUN_SECONDS 80.0

double tn_run_seconds(void)
{
    return TN_RUN_SECONDS;
}

int tn_family_selected(const tn_options *o, const tpl_family *fam)
{
    if (o->n_families == 0)
        return !fam->hidden;
    for (int i = 0; i < o->n_families; i++)
        if (o->families[i] == fam)
            return 1;
    return 0;
}

/* The problem list: the one place that says which problems of fam a run
 * tunes (the --size, else the family's default tuning problems; none with
 * --recorded or --problems, whose items tn_run_list_make puts first). */
int tn_problems_of(const tn_options *o, const tpl_family *fam, const tpl_problem **list)
{
    if (o->items_only && !o->have_size)     /* --recorded, --problems: the items alone */
        return 0;
    if (o->have_size) {
        if (!tpl_family_accepts(fam, &o->size))
            return 0;
        *list = &o->size;
        return 1;
    }
    *list = fam->tuning_problems;
    if (o->n_families == 0 && fam->n_default_tuning_problems > 0 &&
        fam->n_default_tuning_problems < fam->n_tuning_problems)
        return fam->n_default_tuning_problems;
    return fam->n_tuning_problems;
}

int tn_second_looks(const tn_options *o, int n)
{
    return o->have_size || n < 2 ? 0 : n - 1;
}

/* Appends one look to l; -1 when out of memory. */
static int list_add(tn_run_list *l, const tpl_family *fam, const tpl_problem *p, int second)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        tn_look *more = realloc(l->look, (size_t)cap * sizeof *more);
        if (!more)
            return -1;
        l->look = more;
        l->cap = cap;
    }
    tn_look *k = &l->look[l->n++];
    k->fam = fam;
    k->p = p;
    k->second_look = second;
    k->last_look = 1;
    return 0;
}

int tn_run_list_make(const tn_options *o, tn_run_list *l)
{
    l->look = NULL;
    l->n = l->cap = l->n_problems = 0;
    /* the recorded problems (heaviest first) or the --problems file's, each on its own,
     * before the default sizes: what programs called is tuned first */
    for (int k = 0; k < o->n_items; k++) {
        if (!o->items[k].fam || !tn_family_selected(o, o->items[k].fam))
            continue;
        if (list_add(l, o->items[k].fam, &o->items[k].problem, 0) != 0)
            return -1;
        l->n_problems++;
    }
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *fam = tpl_family_at(i);
        const tpl_problem *list = NULL;
        if (!tn_family_selected(o, fam))
            continue;
        int n = tn_problems_of(o, fam, &list), first = l->n;
        for (int k = 0; k < n; k++)
            if (list_add(l, fam, &list[k], 0) != 0)
                return -1;
        /* every problem searched before the family's last gets a second
         * look, a failed one too (it may pass now) */
        int looks = tn_second_looks(o, n);
        for (int k = 0; k < looks; k++) {
            l->look[first + k].last_look = 0;
            if (list_add(l, fam, &list[k], 1) != 0)
                return -1;
        }
        l->n_problems += n;
    }
    return 0;
}

void tn_run_list_free(tn_run_list *l)
{
    free(l->look);
    l->look = NULL;
    l->n = l->cap = 0;
}

double tn_announce_problems(const tn_options *o, const tn_run_list *l)
{
    int first = 0;
    for (int k = 0; k < o->n_items; k++)
        first += o->items[k].fam && tn_family_selected(o, o->items[k].fam);
    if (first) {
        printf("tuning first, in this order:");
        for (int i = 0; i < first && i < l->n; i++) {
            char s[64];
            tn_format_size(l->look[i].p, s, sizeof s);
            printf("%s %s %s", i ? "," : "", l->look[i].fam->name, s);
        }
        printf("\n");
    }
    if (o->items_only && !o->have_size) {       /* the items alone */
        double weights = 0;
        for (int i = 0; i < first && i < l->n; i++)
            weights += tn_family_weight(l->look[i].fam);
        return weights;
    }
    printf("tuning sizes:");
    double weights = 0;
    const tpl_family *shown = NULL;
    long long *valid = NULL, n_valid = -1;
    for (int i = 0; i < l->n; i++) {
        const tn_look *k = &l->look[i];
        if (k->second_look)
            continue;
        if (i < first) {                /* announced above; each takes a guided share */
            weights += tn_family_weight(k->fam);
            continue;
        }
        char s[64];
        tn_format_size(k->p, s, sizeof s);
        if (k->fam != shown) {
            printf("%s %s %s", shown ? ";" : "", k->fam->name, s);
            free(valid);
            valid = NULL;
            n_valid = tpl_valid_configs_cached(k->fam, NULL, &valid);
            shown = k->fam;
        } else {
            printf(", %s", s);
        }
        /* a problem searched exhaustively takes no share of the guided time */
        long long serving = tn_serving_configs(k->fam, valid, n_valid, k->p, TN_EXHAUSTIVE_MAX,
                                               NULL);
        if (o->strategy || n_valid < 0 || serving > TN_EXHAUSTIVE_MAX)
            weights += tn_family_weight(k->fam);
    }
    free(valid);
    printf("\n");
    return weights;
}
