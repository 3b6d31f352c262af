// expect: compile_error
// forbid: root:x:0:0
// A carriage return right after the header name of an #include of a file of the machine.
#include "/etc/passwd"
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {}
