/*
 * metrics.h - regression metrics and lifecycle gates for model versions
 * (doc/reference.md §5).
 *
 *   mse  = mean((y - p)^2)            over pairs where both are finite
 *   rmse = sqrt(mse)
 *   mape = 100 * mean(|y - p| / |y|)  over those pairs with y != 0, in %
 *
 * A metric with no pair to average over is NaN (printed as JSON null).
 * Gates, lower rmse is better: <= 50 Production, <= 100 Canary,
 * <= 200 Staging, else None.
 */
#ifndef EXA_METRICS_H
#define EXA_METRICS_H

#include <stddef.h>

struct reg_metrics {
    double rmse, mse, mape;
    size_t n;      /* pairs used for rmse/mse */
    size_t n_mape; /* pairs used for mape */
};

/* Compute metrics of predictions p against truth y (n each). */
void metrics_compute(const double *y, const double *p, size_t n,
                     struct reg_metrics *m);

#define GATE_STAGING_RMSE 200.0
#define GATE_CANARY_RMSE 100.0
#define GATE_PRODUCTION_RMSE 50.0

/* "Production", "Canary", "Staging" or "None" (also for NaN). Static. */
const char *metrics_stage(double rmse);

#endif
