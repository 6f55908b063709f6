// Contract TU for gk_gemm.cuh: the header with its implementation, which instantiates every
// shipped kernel (each tile configuration in four layouts for bf16 and f16, the split-K sum, the
// fp32 ladder). Unlike reduce_impl.cu it includes the header once, implementation on: gk_gemm.cuh
// keeps its implementation inside the include guard, so a second include would add nothing.
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
