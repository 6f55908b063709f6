// Contract TU for gk_fp8.cuh in an sm_90 build without the sm_90a features: GK_GEMM_SM90 0 leaves
// the wgmma kernels out (they would have no code there): the quantizer's kernels and gk_gemm's
// mma.sync ones are compiled, and the GEMM answers cudaErrorNotSupported.
#define GK_GEMM_SM90 0
#include "gk_tests/contract/fp8_impl.cu"
