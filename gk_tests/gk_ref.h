// CPU references in double for gk's kernels. Plain functions; the tests compare against these.
#ifndef GK_REF_H
#define GK_REF_H

#include <cmath>

#include "gk/gk_elementwise.cuh"

inline double gk_ref_silu(double x) { return x / (1.0 + std::exp(-x)); }

inline double gk_ref_gelu_tanh(double x)
{
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// One element of an elementwise op (gk_ew_op), from inputs already rounded to their dtype.
inline double gk_ref_elementwise(int op, double x, double y, double alpha, double beta)
{
    switch (op) {
    case GK_EW_ADD:
    case GK_EW_RESIDUAL_ADD: return x + y;
    case GK_EW_AXPBY: return alpha * x + beta * y;
    case GK_EW_SWIGLU: return gk_ref_silu(x) * y;
    case GK_EW_GELU_TANH: return gk_ref_gelu_tanh(x);
    default: return x;
    }
}

// A cast to dt: the value itself (the tolerance covers rounding), except where an IEEE
// round-to-nearest cast overflows: f16 holds at most 65504, and 65520 is half an ulp past it.
inline double gk_ref_cast(double x, int dt)
{
    if (dt == GK_F16 && std::fabs(x) >= 65520.0) return x > 0 ? INFINITY : -INFINITY;
    return x;
}

#endif // GK_REF_H
