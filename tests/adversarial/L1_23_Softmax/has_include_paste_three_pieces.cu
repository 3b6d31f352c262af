// expect: compile_error
// __has_include assembled by token pasting, CAT3(_, _h, as_include), in a form the include scan does not recognise: it
// would answer whether /etc/passwd exists on the grading machine. The compiler's root holds only
// CUDA's include tree (a private mount namespace), so the probe finds nothing and the #error below
// stops the compile; were the file visible, the kernel would compile, and this test would fail.
#define CAT(a, b) a##b
#define CAT3(a, b, c) a##b##c
#define PROBE CAT3(_, _h, as_include)
#if !PROBE(</etc/passwd>)
#error "no file outside CUDA's include tree exists for the compiler"
#endif
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {}
