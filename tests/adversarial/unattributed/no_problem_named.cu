// expect: format_error
// expect-unattributed: not_named
// Nothing names the problem (no `problem:`, a folder that is no problem): one record, problem null.
/* kernrl
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x]
*/
extern "C" __global__ void k(float* x) {
  x[0] = 1.0f;
}
