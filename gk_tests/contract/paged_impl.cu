// Contract TU for gk_paged.cuh: the declarations compile alone, then the implementation (stb
// style): the fused RoPE + paged cache append, the decode attention configurations (bf16 and f16
// q, 16-bit and fp8 caches) and gk_attention.cuh's split combine, which the decode launcher uses.
// GK_PAGED_IMPLEMENTATION, not GK_IMPLEMENTATION: gk_attention.cuh's own kernels stay out.
#include "gk/gk_paged.cuh"
#define GK_PAGED_IMPLEMENTATION
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_paged.cuh"
