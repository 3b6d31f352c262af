// expect: compile_error
// forbid: root:x:0:0
// A macro of the submission steers an #include inside a CCCL header (thrust's ADL dispatch) to
// /etc/passwd: no lexical scan of the submission can see it; the compiler's sandbox refuses the read.
#define THRUST_HOST_SYSTEM 99
#define __THRUST_HOST_SYSTEM_NAMESPACE ../../../../../../../../../../../../etc/passwd >
#include <thrust/system/detail/adl/gather.h>
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x, out]
*/
extern "C" __global__ void k(const float* x, float* out) {}
