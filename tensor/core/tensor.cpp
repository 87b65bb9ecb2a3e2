// Tensor metadata and views. Views only rewrite shape, strides and offset
// (Note [Kernel dispatch] explains where data is touched).
#include <algorithm>
#include <numeric>

#include <ddl/tensor/core/checked_shape.h>
#include <ddl/tensor/core/copy.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  DDL_ASSERT(shape_.size() == strides_.size(), "shape ", shape_, " vs strides ", strides_);
  for (int64_t d : shape_) DDL_CHECK(d >= 0, "Tensor: negative extent in shape ", shape_);
  checked_numel(shape_, "Tensor");
}

namespace {
// The ops that index a dim refuse a 0-d tensor, which has none (PyTorch raises
// "Dimension specified as 0 but tensor has no dimensions" or "select() cannot be
// applied to a 0-dim tensor"); wrap_dim would accept -1 and 0 for it.
void check_has_dims(const Tensor& t, int64_t d, const char* op) {
  DDL_CHECK(t.dim() > 0, op, ": dimension ", d, " specified, but a 0-dim tensor has no dimensions");
}
}  // namespace

int64_t Tensor::size(int64_t d) const {
  check_has_dims(*this, d, "size");
  return shape_[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  check_has_dims(*this, d, "stride");
  return strides_[wrap_dim(d, dim(), "stride")];
}

Device Tensor::device() const {
  DDL_CHECK(defined(), "device: tensor is undefined");
  return storage_->device();
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  DDL_CHECK(defined(), "data: tensor is undefined");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size());
}

double Tensor::item() const {
  DDL_CHECK(defined(), "item: tensor is undefined");
  DDL_CHECK(numel() == 1, "item: expected a tensor with one element, got shape ", shape_);
  const Tensor c = device().is_cpu() ? *this : to(Device::cpu());
  double v = 0;
  DDL_DISPATCH_ALL_AND_HALF(dtype_, "item",
                            [&] { v = static_cast<double>(*static_cast<const scalar_t*>(c.raw_data())); });
  return v;
}

namespace {

// Fills in a single -1 extent from the element count.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op, const Shape& from) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (int64_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      DDL_CHECK(infer < 0, op, ": only one dimension can be -1, got ", shape);
      infer = i;
    } else {
      DDL_CHECK(out[i] >= 0, op, ": invalid extent ", out[i], " in ", shape);
      DDL_CHECK(!__builtin_mul_overflow(known, out[i], &known), op, ": shape ", shape,
                " has more elements than int64 can count (integer multiplication overflow)");
    }
  }
  if (infer >= 0) {
    DDL_CHECK(known != 0 && numel % known == 0, op, ": cannot reshape ", from, " into ", shape);
    out[infer] = numel / known;
  }
  DDL_CHECK(checked_numel(out, op) == numel, op, ": cannot reshape ", from, " (", numel, " elements) into ", shape);
  return out;
}

// Strides for viewing (shape, strides) as `target` without copying, if possible:
// only runs of dims that are contiguous with each other may be merged or split
// (the algorithm of PyTorch's computeStride).
bool view_strides(const Shape& shape, const Strides& strides, const Shape& target, Strides& out) {
  if (shape.numel() == 0 || shape.empty()) {
    out = contiguous_strides(target);
    return true;
  }
  out = Strides(std::vector<int64_t>(static_cast<size_t>(target.size()), 1));
  int64_t view_d = target.size() - 1;
  int64_t chunk_base = strides[shape.size() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    const bool chunk_ends = d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
      out[view_d] = view_numel * chunk_base;
      view_numel *= target[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return false;
    if (d > 0) {
      chunk_base = strides[d - 1];
      tensor_numel = view_numel = 1;
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel(), "view", shape_);
  Strides st;
  DDL_CHECK(view_strides(shape_, strides_, target, st), "view: cannot view ", shape_, " with strides ", strides_,
            " as ", target, " without a copy; call reshape() or contiguous() first");
  return Tensor(storage_, target, st, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  const Shape target = infer_shape(shape, numel(), "reshape", shape_);
  Strides st;
  if (view_strides(shape_, strides_, target, st)) return Tensor(storage_, target, st, offset_, dtype_);
  return contiguous().view(target);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  const int64_t s = wrap_dim(start_dim, dim(), "flatten"), e = wrap_dim(end_dim, dim(), "flatten");
  if (dim() == 0) return reshape({1});
  DDL_CHECK(s <= e, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim);
  std::vector<int64_t> out(shape_.begin(), shape_.begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i)  // overflows only past a 0 extent ([0, 2^32, 2^32].flatten(1); PyTorch wraps to 0)
    DDL_CHECK(!__builtin_mul_overflow(n, shape_[i], &n), "flatten: dims ", s, " to ", e, " of ", shape_,
              " have more elements than int64 can count");
  out.push_back(n);
  out.insert(out.end(), shape_.begin() + e + 1, shape_.end());
  return reshape(Shape(out));
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  DDL_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute: got ", dims.size(), " dims for a tensor of shape ",
            shape_);
  std::vector<bool> seen(dims.size(), false);
  Shape sh = shape_;
  Strides st = strides_;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], dim(), "permute");
    DDL_CHECK(!seen[d], "permute: dimension ", d, " repeated");
    seen[d] = true;
    sh[i] = shape_[d];
    st[i] = strides_[d];
  }
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  d0 = wrap_dim(d0, dim(), "transpose");
  d1 = wrap_dim(d1, dim(), "transpose");
  if (dim() == 0) return *this;  // PyTorch: transpose(0, -1) of a 0-d tensor is the tensor
  std::vector<int64_t> p(static_cast<size_t>(dim()));
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[d0], p[d1]);
  return permute(p);
}

Tensor Tensor::t() const {
  DDL_CHECK(dim() <= 2, "t: expected a tensor with at most 2 dims, got shape ", shape_);
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  check_has_dims(*this, d, "slice");
  d = wrap_dim(d, dim(), "slice");
  DDL_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = shape_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sh = shape_;
  Strides st = strides_;
  // Counted without end - start + step - 1, which overflows for a step near 2^63; the
  // stride wraps (unsigned) where it would overflow, which only a one-element slice allows.
  sh[d] = end > start ? (end - start - 1) / step + 1 : 0;
  st[d] = static_cast<int64_t>(static_cast<uint64_t>(strides_[d]) * static_cast<uint64_t>(step));
  return Tensor(storage_, sh, st, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  check_has_dims(*this, d, "narrow");
  d = wrap_dim(d, dim(), "narrow");
  if (start < 0) start += shape_[d];
  // length <= size - start, not start + length <= size: the sum can overflow.
  DDL_CHECK(start >= 0 && length >= 0 && length <= shape_[d] - start, "narrow: start ", start, " and length ", length,
            " are outside dimension ", d, " of shape ", shape_);
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  check_has_dims(*this, d, "select");
  d = wrap_dim(d, dim(), "select");
  const int64_t n = shape_[d];
  DDL_CHECK(index >= -n && index < n, "select: index ", index, " out of range for dimension ", d, " of shape ", shape_);
  if (index < 0) index += n;
  Shape sh = shape_;
  Strides st = strides_;
  sh.erase(d);
  st.erase(d);
  return Tensor(storage_, sh, st, offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::expand(const Shape& shape) const {
  DDL_CHECK(shape.size() >= dim(), "expand: cannot expand ", shape_, " to fewer dims ", shape);
  const int64_t lead = shape.size() - dim();
  Shape sh = shape;
  Strides st(std::vector<int64_t>(static_cast<size_t>(shape.size()), 0));
  for (int64_t i = 0; i < shape.size(); ++i) {
    DDL_CHECK(shape[i] >= 0 || (shape[i] == -1 && i >= lead), "expand: invalid extent ", shape[i], " in ", shape,
              " (-1, keep the size, only for an existing dim)");
    if (i < lead) continue;
    const int64_t src = shape_[i - lead];
    if (shape[i] == -1 || shape[i] == src) {
      sh[i] = src;
      st[i] = strides_[i - lead];
    } else {
      DDL_CHECK(src == 1, "expand: cannot expand ", shape_, " to ", shape, " (dim ", i, " has size ", src, ", not 1)");
    }
  }
  checked_numel(sh, "expand");
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::squeeze() const {
  Shape sh;
  Strides st;
  for (int64_t i = 0; i < dim(); ++i)
    if (shape_[i] != 1) {
      sh.push_back(shape_[i]);
      st.push_back(strides_[i]);
    }
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim(d, dim(), "squeeze");
  if (dim() == 0) return *this;
  if (shape_[d] != 1) return *this;
  Shape sh = shape_;
  Strides st = strides_;
  sh.erase(d);
  st.erase(d);
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  Shape sh = shape_;
  Strides st = strides_;
  const int64_t stride = d < dim() ? strides_[d] * shape_[d] : 1;
  sh.insert(d, 1);
  st.insert(d, stride);
  return Tensor(storage_, sh, st, offset_, dtype_);
}

Tensor Tensor::as_strided(const Shape& shape, const Strides& strides, int64_t offset) const {
  DDL_CHECK(shape.size() == strides.size(), "as_strided: shape ", shape, " and strides ", strides, " differ in length");
  int64_t last = offset, span = 0;
  bool overflow = false;
  for (int64_t i = 0; i < shape.size(); ++i) {
    DDL_CHECK(shape[i] >= 0 && strides[i] >= 0, "as_strided: negative extent or stride");
    if (shape[i] > 0)
      overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last);
  }
  int64_t end_byte = 0;
  overflow |= __builtin_add_overflow(last, 1, &end_byte) ||
              __builtin_mul_overflow(end_byte, static_cast<int64_t>(element_size()), &end_byte);
  DDL_CHECK(checked_numel(shape, "as_strided") == 0 ||
                (offset >= 0 && !overflow && end_byte <= static_cast<int64_t>(storage_->nbytes())),
            "as_strided: view ", shape, " with strides ", strides, " at offset ", offset, " exceeds the storage");
  return Tensor(storage_, shape, strides, offset, dtype_);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, TensorOptions(dtype_, device()));
  copy_into(out, *this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out = empty(shape_, TensorOptions(dtype, device()));
  copy_into(out, *this);
  return out;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  Tensor out = empty(shape_, TensorOptions(dtype_, device));
  copy_into(out, *this);
  return out;
}

Tensor Tensor::pin_memory() const {
  DDL_CHECK(defined(), "pin_memory: tensor is undefined");
  DDL_CHECK(device().is_cpu(), "pin_memory: only CPU tensors can be pinned, got ", describe(*this));
  if (is_pinned() && is_contiguous()) return *this;
  // A broadcast view can hold more elements than memory: nbytes() would wrap, so count them checked.
  const size_t n = static_cast<size_t>(checked_nbytes(shape_, element_size(), "pin_memory"));
  Allocator* pinned = detail::pinned_allocator();
  void* p = pinned->allocate(n);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(p, n, Device::cpu(), [pinned, n](void* q) { pinned->deallocate(q, n); });
  } catch (...) {
    pinned->deallocate(p, n);
    throw;
  }
  Tensor out(std::move(storage), shape_, contiguous_strides(shape_), 0, dtype_);
  copy_into(out, *this);
  return out;
}

bool Tensor::is_pinned() const {
  return defined() && device().is_cpu() && storage_->data() != nullptr && detail::is_pinned(storage_->data());
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  DDL_CHECK(defined() && src.defined(), "copy_: undefined tensor");
  DDL_CHECK(broadcast_shapes(shape_, src.shape(), "copy_") == shape_, "copy_: source ", src.shape(),
            " does not broadcast to the destination's shape ", shape_);
  bump_version();  // every in-place write counts: see Storage::version
  copy_into(*this, src.dim() > dim() ? src : src.expand(shape_));
  return *this;
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined";
  return std::string(dtype_name(t.dtype())) + t.shape().str() + (t.device().is_cpu() ? "" : " on " + t.device().str());
}

}  // namespace ddl
