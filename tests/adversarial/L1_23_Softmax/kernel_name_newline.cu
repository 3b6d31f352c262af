// expect: format_error|compile_error
// forbid: root:x:0:0
// A newline inside the launch block's kernel name, which NVRTC would write into a source of its own.
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: "k\n#include \"/etc/passwd\"\n"
    grid: [1]
    block: [1]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {}
