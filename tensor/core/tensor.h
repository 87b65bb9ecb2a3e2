// Tensor: a strided view (shape, strides, offset, dtype) of refcounted Storage.
// Copying a Tensor copies the view, not the data: views made by reshape,
// permute, slice or expand share storage with their source. Tensors know
// nothing of autograd (see autograd/README.md).
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/device.h>
#include <ddl/tensor/core/dtype.h>
#include <ddl/tensor/core/shape.h>
#include <ddl/tensor/core/storage.h>
#include <ddl/tensor/core/tensor_options.h>

namespace ddl {

class TensorIndex;  // tensor/ops/indexing.h

template <typename V>
struct ValuesIndices;  // below

class Tensor {
 public:
  // An undefined tensor: holds no storage; most calls on it throw.
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, DType dtype);
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  // Assigning to a named tensor rebinds the handle; assigning to a temporary view writes into
  // it, as LibTorch's rvalue operator=: `t[0][1] = 5` is t.select(0, 0).select(0, 1).fill_(5),
  // `t[1] = row` is t.select(0, 1).copy_(row) (row broadcast and converted).
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  const Tensor& operator=(const Tensor& src) && { return copy_(src); }
  const Tensor& operator=(double value) && { return fill_(value); }

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& sizes() const { return shape_; }  // LibTorch's name for shape()
  // dtype and device (requires_grad false: a Tensor has no autograd state).
  TensorOptions options() const { return TensorOptions(dtype_, device()); }
  const Strides& strides() const { return strides_; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return shape_.size(); }
  int64_t numel() const { return shape_.numel(); }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const;
  size_t element_size() const { return dtype_size(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // True when both views read the same storage block.
  bool shares_storage(const Tensor& other) const { return storage_ && storage_ == other.storage_; }
  // In-place writes into this tensor's storage so far (any view's), as PyTorch's _version;
  // 0 for an undefined tensor. Every in-place op calls bump_version() before it writes;
  // code writing through raw_data() into a tensor others may hold should too.
  uint64_t version() const { return storage_ ? storage_->version() : 0; }
  void bump_version() const {
    if (storage_) storage_->bump_version();
  }

  // Pointer to the first element of the view. data<T>() checks that T matches dtype().
  void* raw_data() const;
  template <typename T>
  T* data() const {
    DDL_CHECK(dtype_ == dtype_of<T>, "Tensor::data: tensor is ", dtype_, ", asked for ", dtype_of<T>);
    return static_cast<T*>(raw_data());
  }
  // The single value of a one-element tensor, converted to double (or T).
  double item() const;
  template <typename T>
  T item() const {
    return static_cast<T>(item());
  }

  // ---- views: no data is copied; the result shares storage ----
  // reshape copies only when the strides make a view impossible; view never copies.
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;  // 2-D transpose
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor expand(const Shape& shape) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor as_strided(const Shape& shape, const Strides& strides, int64_t offset) const;

  // ---- copies ----
  Tensor contiguous() const;  // this tensor when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;  // this tensor when the dtype already matches
  Tensor to(Device device) const;
  // A contiguous copy in page-locked (pinned) host memory, from which copies to a
  // GPU run asynchronously; this tensor when already pinned. CPU tensors only;
  // throws ddl::Error when the build or the machine has no CUDA.
  Tensor pin_memory() const;
  // True when this CPU tensor's storage is page-locked memory from pin_memory().
  bool is_pinned() const;
  // Copies src (broadcast to this shape, converted to this dtype) into this view.
  // In-place ops are const, as in LibTorch: they change the data, not the handle.
  const Tensor& copy_(const Tensor& src) const;

  // ---- in place (defined in tensor/ops) ----
  const Tensor& fill_(double value) const;
  const Tensor& zero_() const { return fill_(0.0); }
  const Tensor& add_(const Tensor& other, double alpha = 1.0) const;
  const Tensor& sub_(const Tensor& other) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& add_(double value) const;
  const Tensor& mul_(double value) const;
  const Tensor& div_(double value) const;
  const Tensor& clamp_(double lo, double hi) const;

  // ---- method forms of the free ops, as in LibTorch (tensor/core/tensor_methods.cpp) ----
  Tensor sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  // One dim, as LibTorch's x.sum(1). A template, so that x.sum({}) still means every dim.
  template <std::integral I>
  Tensor sum(I dim, bool keepdim = false) const {
    return sum(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  template <std::integral I>
  Tensor mean(I dim, bool keepdim = false) const {
    return mean(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  Tensor max() const;  // the largest element, 0-dim
  Tensor min() const;
  ValuesIndices<Tensor> max(int64_t dim, bool keepdim = false) const;  // (amax, argmax) along dim
  ValuesIndices<Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax() const;  // index into the flattened tensor
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor pow(double exponent) const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor clamp(std::optional<double> min, std::optional<double> max) const;
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor cumsum(int64_t dim) const;
  ValuesIndices<Tensor> sort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  ValuesIndices<Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  // Comparisons give bool tensors.
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor eq(double other) const;
  Tensor ne(double other) const;
  Tensor lt(double other) const;
  Tensor le(double other) const;
  Tensor gt(double other) const;
  Tensor ge(double other) const;

  // ---- indexing (tensor/ops/indexing.h): t.index({Slice(), 0, None, Ellipsis, idx}) ----
  // t[i] is select(0, i), a view; t[idx] with an index tensor is index({idx}) (a view for a
  // 0-d integer tensor, a copy for int64/bool index tensors), as LibTorch's operator[].
  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor operator[](const Tensor& index) const;
  Tensor index(const std::vector<TensorIndex>& indices) const;
  const Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) const;
  const Tensor& index_put_(const std::vector<TensorIndex>& indices, double value) const;

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

// (values, indices) of sort, topk, max(dim), ...: auto [v, i] = x.sort(); indices are int64.
template <typename V>
struct ValuesIndices {
  V values;
  Tensor indices;
};

// Prints dtype, device, shape and values (eliding the middle of large dims), like PyTorch.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Shape, dtype and device in one string, for error messages: "float32[64, 512]".
std::string describe(const Tensor& t);

}  // namespace ddl
