// The one .cu file of a program that compiles gk's kernels: the implementation of the headers
// it uses. C and FFI callers link it (an object, or a shared library) and see the declarations.
#define GK_IMPLEMENTATION
#include "gk_elementwise.cuh"
