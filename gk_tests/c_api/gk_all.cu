// Every header's implementation in one translation unit: the object the C API test links, and
// libgk.so (//gk_tests/c_api:libgk), the shared build FFI callers load.
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
#include "gk/gk_reduce.cuh"
#include "gk/gk_sgemm.cuh"
#include "gk/gk_gemm.cuh"
#include "gk/gk_attention.cuh"
#include "gk/gk_paged.cuh"
#include "gk/gk_quant.cuh"
#include "gk/gk_fp8.cuh"
