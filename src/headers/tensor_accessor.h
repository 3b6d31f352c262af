// kernrl/tensor_accessor.h, a header kernrl serves to NVRTC (docs/kernel-format.md, "Tensor
// accessors"): PyTorch's tensor accessors for device code, as ATen/core/TensorAccessor.h declares
// them, without PyTorch. A PackedTensorAccessor32/64<T, N> is laid out as PyTorch lays it out and
// as the worker packs an `accessor32(x, N)` / `accessor64(x, N)` argument
// (protocol/tensor_accessor.h): the data pointer, then N sizes, then N strides, each int32_t or
// int64_t, in a struct aligned to 8 bytes. Relies on the prelude's int32_t, int64_t and size_t.
#pragma once

namespace kernrl {

inline const char* kTensorAccessorName = "kernrl/tensor_accessor.h";
inline const char* kTensorAccessor = R"(#pragma once
namespace at {

template <typename T> struct DefaultPtrTraits { typedef T* PtrType; };
template <typename T> struct RestrictPtrTraits { typedef T* __restrict__ PtrType; };

// A view into a packed accessor's dimensions: the data and pointers to the remaining sizes and
// strides (what indexing a PackedTensorAccessor returns).
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class TensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  __host__ __device__ index_t stride(index_t i) const { return strides_[i]; }
  __host__ __device__ index_t size(index_t i) const { return sizes_[i]; }
  __host__ __device__ PtrType data() { return data_; }
  __host__ __device__ const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : TensorAccessorBase<T, N, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i,
                                                        this->sizes_ + 1, this->strides_ + 1);
  }
  __host__ __device__ const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](
      index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i,
                                                        this->sizes_ + 1, this->strides_ + 1);
  }
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class TensorAccessor<T, 1, PtrTraits, index_t> : public TensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides)
      : TensorAccessorBase<T, 1, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  __host__ __device__ const T& operator[](index_t i) const {
    return this->data_[this->strides_[0] * i];
  }
};

// A kernel's parameter: the data pointer, then N sizes, then N strides, by value.
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class GenericPackedTensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ GenericPackedTensorAccessorBase(PtrType data, const index_t* sizes,
                                                      const index_t* strides)
      : data_(data) {
    for (size_t i = 0; i < N; ++i) {
      sizes_[i] = sizes[i];
      strides_[i] = strides[i];
    }
  }
  __host__ __device__ index_t stride(index_t i) const { return strides_[i]; }
  __host__ __device__ index_t size(index_t i) const { return sizes_[i]; }
  __host__ __device__ PtrType data() { return data_; }
  __host__ __device__ const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
class GenericPackedTensorAccessor : public GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ GenericPackedTensorAccessor(PtrType data, const index_t* sizes,
                                                  const index_t* strides)
      : GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i,
                                                        this->sizes_ + 1, this->strides_ + 1);
  }
  __host__ __device__ const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](
      index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i,
                                                        this->sizes_ + 1, this->strides_ + 1);
  }
  // The same data with dimensions dim1 and dim2 swapped.
  __host__ __device__ GenericPackedTensorAccessor transpose(index_t dim1, index_t dim2) const {
    GenericPackedTensorAccessor result(this->data_, this->sizes_, this->strides_);
    index_t s = result.sizes_[dim1], t = result.strides_[dim1];
    result.sizes_[dim1] = result.sizes_[dim2];
    result.strides_[dim1] = result.strides_[dim2];
    result.sizes_[dim2] = s;
    result.strides_[dim2] = t;
    return result;
  }
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class GenericPackedTensorAccessor<T, 1, PtrTraits, index_t>
    : public GenericPackedTensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ GenericPackedTensorAccessor(PtrType data, const index_t* sizes,
                                                  const index_t* strides)
      : GenericPackedTensorAccessorBase<T, 1, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  __host__ __device__ const T& operator[](index_t i) const {
    return this->data_[this->strides_[0] * i];
  }
  __host__ __device__ GenericPackedTensorAccessor transpose(index_t, index_t) const {
    return *this;
  }
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits,
          typename index_t = int64_t>
using PackedTensorAccessor = GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;

}  // namespace at
// torch:: spells at::'s names, as in PyTorch.
namespace torch {
using at::DefaultPtrTraits;
using at::GenericPackedTensorAccessor;
using at::GenericPackedTensorAccessorBase;
using at::PackedTensorAccessor;
using at::PackedTensorAccessor32;
using at::PackedTensorAccessor64;
using at::RestrictPtrTraits;
using at::TensorAccessor;
using at::TensorAccessorBase;
}  // namespace torch
)";

}  // namespace kernrl
