// Contract TU for gk_sgemm.cuh: the declarations compile alone, then the implementation, which
// instantiates the fp32 ladder's kernels.
#include "gk/gk_sgemm.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_sgemm.cuh"
