// expect: compile_error
// forbid: PATH=
// The environment of the grader, through /proc: the compiler starts with an empty environment and
// cannot open /proc at all.
#include "/proc/self/environ"
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {}
