// CPU reference for gk_reduce.cuh, in double.
#ifndef GK_REDUCE_REF_H
#define GK_REDUCE_REF_H

#include <algorithm>
#include <cmath>

#include "gk/gk_reduce.cuh"

// One row of a gk_reduce op (gk_rd_op) in double. x: cols values as stored; w, b: NULL for ones
// and zeros. y gets the output before any fp8 step; for the quant ops *qscale gets max|y| / 448
// (1 for an all-zero row), and y is what out * scale should reproduce.
inline void gk_ref_row(int op, const double *x, int cols, const double *w, const double *b, double eps, double scale,
                       double *y, double *qscale)
{
    bool has_nan = false;
    for (int j = 0; j < cols; j++) has_nan = has_nan || std::isnan(x[j]);
    switch (op) {
    case GK_RD_SOFTMAX:
    case GK_RD_LOG_SOFTMAX: {
        const bool log = op == GK_RD_LOG_SOFTMAX;
        double m = -INFINITY;
        for (int j = 0; j < cols; j++) m = std::max(m, scale * x[j]);
        if (has_nan) {
            for (int j = 0; j < cols; j++) y[j] = NAN;
        } else if (m == -INFINITY) { // every entry -inf: softmax 0, log-softmax -inf (documented)
            for (int j = 0; j < cols; j++) y[j] = log ? -INFINITY : 0.0;
        } else {
            double s = 0;
            for (int j = 0; j < cols; j++) s += std::exp(scale * x[j] - m);
            for (int j = 0; j < cols; j++) y[j] = log ? scale * x[j] - m - std::log(s) : std::exp(scale * x[j] - m) / s;
        }
        return;
    }
    case GK_RD_LAYERNORM: {
        double mean = 0, var = 0;
        for (int j = 0; j < cols; j++) mean += x[j];
        mean /= cols;
        for (int j = 0; j < cols; j++) var += (x[j] - mean) * (x[j] - mean);
        var /= cols;
        const double r = 1.0 / std::sqrt(var + eps);
        for (int j = 0; j < cols; j++) y[j] = (x[j] - mean) * r * (w ? w[j] : 1.0) + (b ? b[j] : 0.0);
        return;
    }
    case GK_RD_QUANT: {
        double amax = 0;
        for (int j = 0; j < cols; j++) {
            y[j] = x[j];
            amax = std::max(amax, std::fabs(x[j]));
        }
        *qscale = amax > 0 ? amax / 448.0 : 1.0;
        return;
    }
    default: { // rmsnorm forms (the residual form gets h = residual + x, rounded, as x)
        double ss = 0;
        for (int j = 0; j < cols; j++) ss += x[j] * x[j];
        const double r = 1.0 / std::sqrt(ss / cols + eps);
        double amax = 0;
        for (int j = 0; j < cols; j++) {
            y[j] = x[j] * r * (w ? w[j] : 1.0);
            amax = std::max(amax, std::fabs(y[j]));
        }
        if (qscale) *qscale = amax > 0 ? amax / 448.0 : 1.0;
        return;
    }
    }
}

#endif // GK_REDUCE_REF_H
