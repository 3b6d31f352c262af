// expect: format_error
// expect-unattributed: unknown_problem
// The launch block names a problem kernrl does not have: one record, problem null, counted nowhere.
/* kernrl
problem: L9_999_No_such_problem
launches:
  - kernel: k
    grid: [1]
    block: [1]
    args: [x]
*/
extern "C" __global__ void k(float* x) {
  x[0] = 1.0f;
}
