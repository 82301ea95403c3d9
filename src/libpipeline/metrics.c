/*
 * metrics.c - rmse, mse, mape and the stage gates (see metrics.h).
 * Non-finite pairs are left out rather than poisoning the mean, so a
 * single NaN prediction cannot turn a model's metrics into NaN.
 */
#include "libpipeline/metrics.h"

#include <math.h>

void metrics_compute(const double *y, const double *p, size_t n,
                     struct reg_metrics *m)
{
    double se = 0, ape = 0;
    m->n = m->n_mape = 0;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (!isfinite(y[i]) || !isfinite(p[i]))
            continue;
        d = y[i] - p[i];
        se += d * d;
        m->n++;
        if (y[i] != 0) {
            ape += fabs(d) / fabs(y[i]);
            m->n_mape++;
        }
    }
    m->mse = m->n ? se / (double)m->n : NAN;
    m->rmse = m->n ? sqrt(m->mse) : NAN;
    m->mape = m->n_mape ? 100.0 * ape / (double)m->n_mape : NAN;
}

const char *metrics_stage(double rmse)
{
    if (isnan(rmse))
        return "None";
    if (rmse <= GATE_PRODUCTION_RMSE)
        return "Production";
    if (rmse <= GATE_CANARY_RMSE)
        return "Canary";
    if (rmse <= GATE_STAGING_RMSE)
        return "Staging";
    return "None";
}
