// Contract TU for gk_elementwise.cuh: the declarations compile alone, then the implementation
// (stb style: the same header again with the define), which instantiates every shipped kernel.
#include "gk/gk_elementwise.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_elementwise.cuh"
