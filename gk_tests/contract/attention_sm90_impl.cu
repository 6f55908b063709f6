// Contract TU for gk_attention.cuh in an sm_90 build without the sm_90a features:
// GK_ATTENTION_SM90 0 leaves the wgmma kernels of gk_attention_sm90.cuh out (they would have no
// code there), so every kernel compiled is one the build can run.
#define GK_ATTENTION_SM90 0
#include "gk_tests/contract/attention_impl.cu"
