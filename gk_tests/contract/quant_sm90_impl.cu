// Contract TU for gk_quant.cuh in an sm_90 build without the sm_90a features: GK_GEMM_SM90 0
// leaves the wgmma kernels out (they would have no code there), so every kernel compiled is one
// the build can run.
#define GK_GEMM_SM90 0
#include "gk_tests/contract/quant_impl.cu"
