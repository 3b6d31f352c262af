// expect: compile_error
// expect-cut: error.log
// A 700-byte kernel whose one error names a type of 2^21 leaves: NVRTC writes a log of about 33 MB.
// The record keeps records.compile_log_bytes (16 KiB) of it and notes how much was cut.
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [batch_size]
    block: [256]
    args: [x, out, dim]
*/
template <class A, class B>
struct P {};
template <int N, class T>
struct D {
  using type = typename D<N - 1, P<T, T>>::type;
};
template <class T>
struct D<0, T> {
  using type = T;
};
extern "C" __global__ void k(const float* x, float* out, int dim) {
  typename D<21, int>::type v = 1;
  out[0] = dim;
}
