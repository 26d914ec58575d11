/* model.c: the selection model (model.h): a stored winner's time at a new
 * shape from its time at its own shape and its tile geometry; docs/selection.md
 * gives the method and its replay numbers. Pure arithmetic: no GPU. */
#include <math.h>
#include "model.h"

/* An H200-class device's memory where the caller has none (tests, replay): 4.8 TB/s. */
#define MD_DEFAULT_BYTES_PER_S 4.8e12

/* Peak DRAM bytes per second of dev: two transfers per memory clock over
 * the bus (HBM and GDDR as the driver reports them), else the default. */
static double peak_bytes_per_s(const at_device_info *dev)
{
    if (dev && dev->mem_clock_khz > 0 && dev->mem_bus_bits > 0)
        return 2.0 * dev->mem_clock_khz * 1e3 * (dev->mem_bus_bits / 8.0);
    return MD_DEFAULT_BYTES_PER_S;
}

int md_cost(const tpl_tile *t, const at_device_info *dev, const tpl_problem *p,
            double *compute, double *memory_ms, double *fixed_ms)
{
    if (!t || !p || p->n_dims < 3 || t->bm <= 0 || t->bn <= 0)
        return 0;
    long long m = p->dims[0] > 0 ? p->dims[0] : 1, n = p->dims[1] > 0 ? p->dims[1] : 1;
    long long k = p->dims[2] > 0 ? p->dims[2] : 1, batch = tpl_problem_batch(p);
    int splitk = t->splitk > 1 ? t->splitk : 1, products = t->products > 1 ? t->products : 1;
    int sms = tpl_device_sms(dev);
    int resident = tpl_tile_blocks_per_sm(t, dev);

    /* Tiles and their waves: whole tiles per SM (the busiest SM sets the
     * time), as a fraction where stream-K splits the last wave by K steps;
     * fewer blocks than an SM holds run faster each, but not in proportion
     * (they share no issue slots yet wait on the same latencies): the
     * square root of the occupancy left. */
    double tiles = (double)tpl_cdiv(m, t->bm) * (double)tpl_cdiv(n, t->bn) *
                   (double)tpl_cdiv(batch, products) * splitk;
    double per_sm = t->stream_k ? tiles / sms : ceil(tiles / sms);
    double waves = per_sm >= resident ? per_sm / resident : sqrt(per_sm / resident);
    /* one tile's work: its area (the padding of a partial tile costs as much
     * as real rows) times its K depth plus the fixed prologue and epilogue */
    double depth = (double)tpl_cdiv(k, splitk) + MD_K_FIXED;
    *compute = waves * (double)t->bm * t->bn * products * depth;

    /* Bytes every run must move: A and B once, C once, and split-K's
     * partials (FP32, FP64 for 8-byte types) written and read back. */
    double elem = t->elem_bytes > 0 ? t->elem_bytes : 4;
    double bytes = (double)batch * elem * ((double)m * k + (double)k * n + (double)m * n);
    if (splitk > 1)
        bytes += (double)batch * m * n * splitk * 2.0 * (elem >= 8 ? 8 : 4);
    *memory_ms = bytes / (MD_MEM_EFFICIENCY * peak_bytes_per_s(dev)) * 1e3;
    *fixed_ms = MD_LAUNCH_MS * (splitk > 1 ? 2 : 1);
    return 1;
}

double md_predict_ms(const tpl_family *fam, const int *cfg, const at_device_info *dev,
                     const tpl_problem *tuned, double measured_ms, const tpl_problem *p)
{
    tpl_tile t;
    if (!fam || !fam->tile_of || !cfg || !(measured_ms > 0) || !fam->tile_of(cfg, &t))
        return NAN;
    double c0, mem0, fix0, c1, mem1, fix1;
    if (!md_cost(&t, dev, tuned, &c0, &mem0, &fix0) || !md_cost(&t, dev, p, &c1, &mem1, &fix1) ||
        !(c0 > 0))
        return NAN;
    /* The configuration's speed: its measured time less the launches, at
     * least a quarter of it (a measurement at the memory bound says little
     * of the compute speed; it then counts as compute, pessimistically). */
    double busy = measured_ms - fix0;
    if (busy < 0.25 * measured_ms)
        busy = 0.25 * measured_ms;
    double per_unit = busy / c0;
    double run = per_unit * c1;
    return fix1 + (run > mem1 ? run : mem1);
}
