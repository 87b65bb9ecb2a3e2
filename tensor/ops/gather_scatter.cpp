// Frontends of the index-driven ops of tensor/ops/indexing.h: index_select and
// index_add (gather and scatter_add with the index laid along one dim),
// gather, scatter(_add) and masked_fill (a where()). Indices are checked here,
// once, so the kernels (tensor/cpu/indexing.cpp, tensor/cuda/gather_scatter.cu)
// only walk memory; every operand must already be on self's device.
#include <cmath>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/factory_value.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/join.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(gather_kernel, GatherFn);
DDL_DEFINE_KERNEL(scatter_kernel, ScatterFn);
}  // namespace kernels

namespace detail {

void require_same_device(const Tensor& t, const Tensor& other, const char* what, const char* op) {
  DDL_CHECK(other.defined(), op, ": undefined ", what);
  DDL_CHECK(other.device() == t.device(), op, ": ", what, " ", describe(other), " is on ", other.device(), " but self ",
            describe(t), " is on ", t.device(), "; move it with .to()");
}

void require_no_internal_overlap(const Tensor& t, const char* op) {
  for (int64_t d = 0; d < t.dim(); ++d)
    DDL_CHECK(t.strides()[d] != 0 || t.size(d) <= 1, op, ": more than one element of the written-to tensor ",
              describe(t), " refers to a single memory location (dim ", d,
              " is expanded, stride 0); clone() it first, as PyTorch requires");
}

std::pair<int64_t, int64_t> index_min_max(const Tensor& index) {
  // One read-back for both bounds. On CUDA it waits for the device; PyTorch's CUDA
  // kernels instead assert on the device and fail at the next synchronisation.
  const std::vector<int64_t> v = to_vector<int64_t>(stack({amin(index), amax(index)}));
  return {v[0], v[1]};
}

}  // namespace detail

namespace {

using detail::require_same_device;

// Throws unless every value of index is in [0, n) (a host sync on CUDA: see index_min_max).
void check_index_range(const Tensor& index, int64_t n, int64_t dim, const char* op) {
  if (index.numel() == 0) return;
  const auto [lo, hi] = detail::index_min_max(index);
  DDL_CHECK(lo >= 0, op, ": index ", lo, " is out of bounds for dimension ", dim, " with size ", n);
  DDL_CHECK(hi < n, op, ": index ", hi, " is out of bounds for dimension ", dim, " with size ", n);
}

// Devices, dtypes and shapes shared by gather (src null) and scatter; index values
// too when check_range (index_select and index_add have checked them already).
void check_gather_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, const char* op,
                          bool check_range = true) {
  DDL_CHECK(self.defined(), op, ": undefined tensor");
  require_same_device(self, index, "index", op);
  DDL_CHECK(index.dtype() == DType::Int64, op, ": expected an int64 index, got ", describe(index));
  DDL_CHECK(index.dim() == self.dim(), op, ": index ", describe(index), " must have as many dims as self ",
            describe(self));
  if (src) {
    require_same_device(self, *src, "src", op);
    DDL_CHECK(src->dim() == self.dim(), op, ": src ", describe(*src), " must have as many dims as self ",
              describe(self));
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    DDL_CHECK(d == dim || index.size(d) <= self.size(d), op, ": index ", describe(index), " is larger than self ",
              describe(self), " in dimension ", d);
    if (src)
      DDL_CHECK(index.size(d) <= src->size(d), op, ": index ", describe(index), " is larger than src ", describe(*src),
                " in dimension ", d);
  }
  if (check_range) check_index_range(index, self.dim() ? self.size(dim) : 1, dim, op);
}

Tensor gather_impl(const Tensor& t, int64_t dim, const Tensor& index, bool check_range) {
  const int64_t d = t.dim() ? wrap_dim(dim, t.dim(), "gather") : 0;
  check_gather_scatter(t, d, index, nullptr, "gather", check_range);
  Tensor out = empty(index.shape(), TensorOptions(t.dtype(), t.device()));
  if (t.dim() == 0) {
    out.copy_(t);
    return out;
  }
  if (out.numel() > 0) kernels::gather_kernel(t.device())(out, t, d, index);
  return out;
}

const Tensor& scatter_add_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               bool check_range, const char* op = "scatter_add_") {
  const int64_t d = self.dim() ? wrap_dim(dim, self.dim(), op) : 0;
  check_gather_scatter(self, d, index, &src, op, check_range);
  detail::require_no_internal_overlap(self, op);
  self.bump_version();  // every in-place write counts: see Storage::version
  if (self.dim() == 0) return self.add_(src.to(self.dtype()));
  if (index.numel() > 0) kernels::scatter_kernel(self.device())(self, d, index, src.to(self.dtype()), true);
  return self;
}

// The 1-D index of index_select and index_add as int64, checked against t.size(d)
// when check_range.
Tensor checked_dim_index(const Tensor& t, int64_t d, const Tensor& index, const char* op, bool check_range = true) {
  require_same_device(t, index, "index", op);
  DDL_CHECK(index.dim() <= 1 && (index.dtype() == DType::Int64 || index.dtype() == DType::Int32), op,
            ": expected a 1-D int64 index, got ", describe(index));
  const Tensor idx = index.to(DType::Int64).reshape({-1});
  if (check_range) check_index_range(idx, t.size(d), d, op);
  return idx;
}

Tensor index_select_impl(const Tensor& t, int64_t dim, const Tensor& index, bool check_range) {
  DDL_CHECK(t.defined(), "index_select: undefined tensor");
  if (t.dim() == 0) {  // PyTorch treats a 0-d self as one element and keeps its 0-d shape
    wrap_dim(dim, 0, "index_select");
    checked_dim_index(t.reshape({1}), 0, index, "index_select", check_range);
    return t.clone();
  }
  const int64_t d = wrap_dim(dim, t.dim(), "index_select");
  const Tensor idx = checked_dim_index(t, d, index, "index_select", check_range);
  Shape out_shape = t.shape(), along(std::vector<int64_t>(static_cast<size_t>(t.dim()), 1));
  out_shape[d] = along[d] = idx.numel();
  return gather_impl(t, d, idx.view(along).expand(out_shape), /*check_range=*/false);
}

}  // namespace

Tensor detail::index_select_in_range(const Tensor& t, int64_t dim, const Tensor& index) {
  return index_select_impl(t, dim, index, /*check_range=*/false);
}

// index_select(t, d, i) is gather with i laid along d and broadcast over the other dims.
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  return index_select_impl(t, dim, index, /*check_range=*/true);
}

namespace {

Tensor index_add_impl(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, bool check_range) {
  DDL_CHECK(t.defined(), "index_add: undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), "index_add");
  DDL_CHECK(index.defined() && index.dim() <= 1 && (index.dtype() == DType::Int64 || index.dtype() == DType::Int32),
            "index_add: expected a 1-D int64 index, got ", describe(index));
  if (t.dim() == 0) {  // as PyTorch: a 0-d self is one element, every index 0 adds its source value
    DDL_CHECK(source.defined() && source.dim() <= 1 && source.numel() == index.numel(), "index_add: source ",
              describe(source), " must have one value per index of ", describe(index), " (self ", describe(t), ")");
    require_same_device(t, source, "source", "index_add");
    checked_dim_index(t.reshape({1}), 0, index, "index_add", check_range);
    return add(t, sum(source).to(t.dtype())).to(t.dtype());
  }
  Shape expected = t.shape(), along(std::vector<int64_t>(static_cast<size_t>(t.dim()), 1));
  expected[d] = along[d] = index.numel();
  DDL_CHECK(source.defined() && source.shape() == expected, "index_add: source ", describe(source), " must have shape ",
            expected, " (self ", describe(t), " with dimension ", d, " of the index's length)");
  require_same_device(t, source, "source", "index_add");
  const Tensor idx = checked_dim_index(t, d, index, "index_add", check_range);
  Tensor out = t.clone();
  scatter_add_impl(out, d, idx.view(along).expand(expected), source, /*check_range=*/false);
  return out;
}

}  // namespace

Tensor detail::index_add_in_range(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  return index_add_impl(t, dim, index, source, /*check_range=*/false);
}

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  return index_add_impl(t, dim, index, source, /*check_range=*/true);
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  return gather_impl(t, dim, index, /*check_range=*/true);
}

namespace {

Tensor fill_value(double value, const Tensor& t, const char* op);

// scatter_ and scatter, under the name `op` the user called.
const Tensor& scatter_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const char* op) {
  const int64_t d = self.dim() ? wrap_dim(dim, self.dim(), op) : 0;
  check_gather_scatter(self, d, index, &src, op);
  detail::require_no_internal_overlap(self, op);
  self.bump_version();  // every in-place write counts: see Storage::version
  if (self.dim() == 0) return self.copy_(src);
  if (index.numel() > 0) kernels::scatter_kernel(self.device())(self, d, index, src.to(self.dtype()), false);
  return self;
}

const Tensor& scatter_value_impl(const Tensor& self, int64_t dim, const Tensor& index, double value, const char* op) {
  DDL_CHECK(self.defined() && index.defined(), op, ": undefined tensor");
  return scatter_impl(self, dim, index, fill_value(value, self, op).expand(index.shape()), op);
}

}  // namespace

const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, src, "scatter_");
}

const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  return scatter_value_impl(self, dim, index, value, "scatter_");
}

const Tensor& scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_add_impl(self, dim, index, src, /*check_range=*/true);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = self.clone();
  scatter_impl(out, dim, index, src, "scatter");
  return out;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value) {
  Tensor out = self.clone();
  scatter_value_impl(out, dim, index, value, "scatter");
  return out;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = self.clone();
  scatter_add_impl(out, dim, index, src, /*check_range=*/true, "scatter_add");
  return out;
}

// where() already broadcasts and runs on every device.
namespace {
// value as a 0-d tensor of t's dtype, if it fits there (detail::check_value_fits);
// into an integer dtype the fraction is dropped.
Tensor fill_value(double value, const Tensor& t, const char* op) {
  const DType d = t.dtype();
  detail::check_value_fits(value, d, op);
  if (is_floating(d) || d == DType::Bool) return scalar_tensor(value, TensorOptions(d, t.device()));
  return scalar_tensor(std::trunc(value), TensorOptions(DType::Int64, t.device())).to(d);  // int64 wraps into uint8
}
}  // namespace

Tensor masked_fill(const Tensor& t, const Tensor& mask, double value) {
  DDL_CHECK(t.defined() && mask.defined(), "masked_fill: undefined tensor");
  DDL_CHECK(mask.dtype() == DType::Bool, "masked_fill: expected a bool mask, got ", describe(mask));
  DDL_CHECK(mask.device() == t.device(), "masked_fill: mask ", describe(mask), " is on ", mask.device(), " but self ",
            describe(t), " is on ", t.device(), "; move it with .to()");
  broadcast_shapes(t.shape(), mask.shape(), "masked_fill");  // the checks where() would make, under this name
  return where(mask, fill_value(value, t, "masked_fill"), t);
}

const Tensor& masked_fill_(const Tensor& t, const Tensor& mask, double value) {
  DDL_CHECK(t.defined() && mask.defined(), "masked_fill_: undefined tensor");
  DDL_CHECK(mask.dtype() == DType::Bool, "masked_fill_: expected a bool mask, got ", describe(mask));
  DDL_CHECK(mask.device() == t.device(), "masked_fill_: mask ", describe(mask), " is on ", mask.device(), " but self ",
            describe(t), " is on ", t.device(), "; move it with .to()");
  DDL_CHECK(broadcast_shapes(t.shape(), mask.shape(), "masked_fill_") == t.shape(), "masked_fill_: mask ",
            describe(mask), " does not broadcast to self ", describe(t));
  fill_value(value, t, "masked_fill_");  // refused under this name
  return t.copy_(masked_fill(t, mask, value));
}

}  // namespace ddl
