// index(), index_put_() and nonzero() of tensor/ops/indexing.h (gather and scatter
// live in gather_scatter.cpp). Note [Advanced indexing]: the index list is
// applied in one pass; integers, slices, None and Ellipsis only rewrite the
// view (shape, strides, offset). Index tensors (a bool mask becomes its nonzero()
// coordinates) are broadcast to one shape B and turned into element offsets
// into that view; the dims they index are dropped from it, leaving a "rest"
// view. Reading gathers rows of the rest view at those offsets ([N, rest...])
// and then places B's dims as NumPy does: where the indexed dims were when they
// were adjacent, first otherwise. Writing runs the same mapping backwards.
// The offsets are computed with elementwise ops, so this file runs on every device.
#include <algorithm>
#include <limits>
#include <numeric>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/factory_value.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(take_kernel, TakeFn);
DDL_DEFINE_KERNEL(put_kernel, PutFn);
DDL_DEFINE_KERNEL(nonzero_kernel, NonzeroFn);
}  // namespace kernels

namespace {

// An index list resolved against a tensor (see Note [Advanced indexing]).
struct ResolvedIndex {
  Tensor view;                  // after integers, slices, None and Ellipsis
  std::vector<int64_t> dims;    // dims of `view` indexed by tensors, increasing
  std::vector<int64_t> source;  // the same dims numbered as in the indexed tensor, for errors
  std::vector<Tensor> tensors;  // their int64 index tensors on view's device, broadcast to `bshape`
  std::vector<bool> in_range;   // a bool mask's nonzero() coordinates: in [0, size) already, not checked again
  Shape bshape;                 // B
  bool advanced() const { return !dims.empty(); }
};

std::string index_str(const std::vector<TensorIndex>& indices) {
  std::string s = "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    const TensorIndex& ix = indices[i];
    if (i) s += ", ";
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer:
        s += std::to_string(ix.integer());
        break;
      case TensorIndex::Kind::Slice: {
        auto bound = [](std::optional<int64_t> b) { return b ? std::to_string(*b) : std::string(); };
        const Slice& sl = ix.slice();
        s += bound(sl.start) + ":" + bound(sl.stop) + (sl.step ? ":" + bound(sl.step) : "");
        break;
      }
      case TensorIndex::Kind::None:
        s += "None";
        break;
      case TensorIndex::Kind::Ellipsis:
        s += "...";
        break;
      case TensorIndex::Kind::Tensor:
        s += describe(ix.tensor());
        break;
    }
  }
  return s + "]";
}

// Note [0-d integer index]: a 0-d int64/int32 index tensor selects, as an integer does, so
// x[torch::tensor(1)] is a view sharing x's storage, as in PyTorch (its indexing code turns
// such a tensor into an integer: torch/csrc/autograd/python_variable_indexing.cpp). Reading
// the value back costs a host sync for a CUDA index tensor, as there.
bool is_integer_scalar(const TensorIndex& ix) {
  return ix.kind() == TensorIndex::Kind::Tensor && ix.tensor().defined() && ix.tensor().dim() == 0 &&
         (ix.tensor().dtype() == DType::Int64 || ix.tensor().dtype() == DType::Int32);
}

int64_t integer_of(const TensorIndex& ix) {
  return ix.kind() == TensorIndex::Kind::Integer ? ix.integer() : ix.tensor().item<int64_t>();
}

ResolvedIndex resolve(const Tensor& t, const std::vector<TensorIndex>& indices, const char* op) {
  DDL_CHECK(t.defined(), op, ": undefined tensor");
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& ix : indices) {
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer:
      case TensorIndex::Kind::Slice:
        ++consumed;
        break;
      case TensorIndex::Kind::Tensor:
        DDL_CHECK(ix.tensor().defined(), op, ": undefined index tensor");
        consumed += ix.tensor().dtype() == DType::Bool ? ix.tensor().dim() : 1;
        break;
      case TensorIndex::Kind::Ellipsis:
        ++ellipses;
        break;
      case TensorIndex::Kind::None:
        break;
    }
  }
  DDL_CHECK(ellipses <= 1, op, ": an index can have only one Ellipsis, got ", index_str(indices));
  DDL_CHECK(consumed <= t.dim(), op, ": too many indices for a tensor of dimension ", t.dim(), " (shape ", t.shape(),
            "), got ", index_str(indices));

  ResolvedIndex r;
  r.view = t;
  std::vector<Tensor> raw;  // index tensors before broadcasting, matching r.dims
  int64_t d = 0;            // the next dim of r.view to index
  int64_t src = 0;          // the same dim numbered as in t
  for (const TensorIndex& ix : indices) {
    switch (ix.kind()) {
      case TensorIndex::Kind::Integer: {
        const int64_t n = r.view.size(d), i = integer_of(ix);
        DDL_CHECK(i >= -n && i < n, op, ": index ", i, " is out of range for dimension ", src, " with size ", n,
                  " (indexing ", describe(t), " with ", index_str(indices), ")");
        r.view = r.view.select(d, i);
        ++src;
        // Tensor indices recorded so far stay at their positions (all are < d).
        break;
      }
      case TensorIndex::Kind::Slice: {
        const Slice& s = ix.slice();
        const int64_t step = s.step.value_or(1);
        DDL_CHECK(step > 0, op, ": slice step must be positive, got ", step);
        r.view = r.view.slice(d, s.start.value_or(0), s.stop.value_or(std::numeric_limits<int64_t>::max()), step);
        ++d;
        ++src;
        break;
      }
      case TensorIndex::Kind::None:
        r.view = r.view.unsqueeze(d++);
        break;
      case TensorIndex::Kind::Ellipsis:
        d += t.dim() - consumed;
        src += t.dim() - consumed;
        break;
      case TensorIndex::Kind::Tensor: {
        if (is_integer_scalar(ix)) {  // See Note [0-d integer index]
          const int64_t n = r.view.size(d), i = integer_of(ix);
          DDL_CHECK(i >= -n && i < n, op, ": index ", i, " is out of range for dimension ", src, " with size ", n,
                    " (indexing ", describe(t), " with ", index_str(indices), ")");
          r.view = r.view.select(d, i);
          ++src;
          break;
        }
        const Tensor& it = ix.tensor();
        // As PyTorch: index tensors on the CPU or on t's device (CPU ones are moved).
        DDL_CHECK(it.device().is_cpu() || it.device() == t.device(), op, ": index tensor ", describe(it), " is on ",
                  it.device(), " but the indexed tensor ", describe(t), " is on ", t.device(),
                  "; index tensors must be on the CPU or on the indexed tensor's device");
        if (it.dtype() == DType::Bool) {
          DDL_CHECK(it.dim() > 0, op, ": a 0-dim bool index is not supported");
          for (int64_t k = 0; k < it.dim(); ++k)
            DDL_CHECK(it.size(k) == r.view.size(d + k), op, ": the shape of the mask ", it.shape(), " at index ", k,
                      " does not match the shape of the indexed tensor ", t.shape(), " at index ", src + k);
          const Tensor coords = nonzero(it);  // [count, k]
          for (int64_t k = 0; k < it.dim(); ++k) {
            r.dims.push_back(d++);
            r.source.push_back(src++);
            r.in_range.push_back(true);
            raw.push_back(coords.select(1, k).to(t.device()));
          }
        } else {
          DDL_CHECK(it.dtype() == DType::Int64 || it.dtype() == DType::Int32, op,
                    ": index tensors must be int64 or bool, got ", describe(it));
          r.dims.push_back(d++);
          r.source.push_back(src++);
          r.in_range.push_back(false);
          raw.push_back(it.to(DType::Int64).to(t.device()));
        }
        break;
      }
    }
  }
  if (raw.empty()) return r;
  r.bshape = raw[0].shape();
  for (const Tensor& x : raw) r.bshape = broadcast_shapes(r.bshape, x.shape(), op);
  for (const Tensor& x : raw) r.tensors.push_back(x.expand(r.bshape));
  return r;
}

// Element offsets (int64 [N], N = numel of B, on r.view's device) of the indexed
// positions in r.view, checking every index against its dim (negative ones count
// from the end). The range check reads the bounds back: a host sync on CUDA, so
// it is skipped for a mask's coordinates (r.in_range), valid by construction.
Tensor element_offsets(const ResolvedIndex& r, const char* op) {
  Tensor offsets = zeros(r.bshape, TensorOptions(DType::Int64, r.view.device()));
  if (r.bshape.numel() == 0) return offsets.reshape({-1});
  for (size_t j = 0; j < r.dims.size(); ++j) {
    const int64_t n = r.view.size(r.dims[j]), stride = r.view.stride(r.dims[j]);
    const Tensor& idx = r.tensors[j];
    int64_t lo = 0;  // the least index, when negative (a mask's coordinates never are)
    if (!r.in_range[j]) {
      const auto [least, hi] = detail::index_min_max(idx);
      DDL_CHECK(least >= -n, op, ": index ", least, " is out of bounds for dimension ", r.source[j], " with size ", n);
      DDL_CHECK(hi < n, op, ": index ", hi, " is out of bounds for dimension ", r.source[j], " with size ", n);
      lo = least;
    }
    // (An int64 tensor plus a double promotes to float64: add n as an int64 tensor.)
    const Tensor size = scalar_tensor(static_cast<double>(n), TensorOptions(DType::Int64, idx.device()));
    const Tensor wrapped = lo < 0 ? where(lt(idx, 0.0), add(idx, size), idx) : idx;
    offsets = add(offsets, wrapped, static_cast<double>(stride));
  }
  return offsets.reshape({-1});
}

// r.view without the indexed dims.
Tensor rest_view(const ResolvedIndex& r) {
  Shape shape;
  Strides strides;
  for (int64_t d = 0; d < r.view.dim(); ++d)
    if (std::find(r.dims.begin(), r.dims.end(), d) == r.dims.end()) {
      shape.push_back(r.view.size(d));
      strides.push_back(r.view.stride(d));
    }
  return Tensor(r.view.storage(), shape, strides, r.view.offset(), r.view.dtype());
}

// Where B's dims go in the result: at the first indexed dim when the indexed dims
// are adjacent, in front otherwise (NumPy's rule).
int64_t result_position(const ResolvedIndex& r) {
  for (size_t j = 1; j < r.dims.size(); ++j)
    if (r.dims[j] != r.dims[j - 1] + 1) return 0;
  return r.dims[0];
}

// The permutation taking [B..., rest...] to the result's dim order.
std::vector<int64_t> to_result_order(int64_t nb, int64_t nrest, int64_t pos) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < pos; ++i) p.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) p.push_back(i);
  for (int64_t i = pos; i < nrest; ++i) p.push_back(nb + i);
  return p;
}

}  // namespace

Tensor index(const Tensor& t, const std::vector<TensorIndex>& indices) {
  const ResolvedIndex r = resolve(t, indices, "index");
  if (!r.advanced()) return r.view;
  const Tensor rest = rest_view(r);
  const Tensor offsets = element_offsets(r, "index");
  Shape flat = rest.shape();
  flat.insert(0, offsets.numel());
  Tensor out = empty(flat, TensorOptions(t.dtype(), t.device()));
  if (out.numel() > 0) kernels::take_kernel(t.device())(out, rest, offsets);
  Shape bshaped = r.bshape;
  for (int64_t s : rest.shape()) bshaped.push_back(s);
  const int64_t pos = result_position(r);
  out = out.view(bshaped);
  if (pos == 0) return out;
  return out.permute(to_result_order(r.bshape.size(), rest.dim(), pos)).contiguous();
}

namespace {

// index_put_ and index_put, under the name `op` the user called.
const Tensor& index_put_impl(const Tensor& t, const std::vector<TensorIndex>& indices, const Tensor& values,
                             bool accumulate, const char* op) {
  DDL_CHECK(values.defined(), op, ": undefined values");
  const ResolvedIndex r = resolve(t, indices, op);
  // With index tensors PyTorch's index_put_ converts nothing ("Index put requires the
  // source and destination dtypes match"); integers and slices alone are a copy_.
  DDL_CHECK(!r.advanced() || values.dtype() == t.dtype(), op, ": values ", describe(values),
            " must have the dtype of the indexed tensor ", describe(t));
  const Tensor v = values.to(t.dtype());
  if (!r.advanced()) {
    if (accumulate)
      r.view.add_(v);
    else
      r.view.copy_(v);
    return t;
  }
  detail::require_same_device(t, values, "values", op);
  // Parallel writes (CUDA) to one element through an expanded view would race.
  detail::require_no_internal_overlap(t, op);
  t.bump_version();  // every in-place write counts: see Storage::version
  const Tensor rest = rest_view(r);
  const Tensor offsets = element_offsets(r, op);
  const int64_t nb = r.bshape.size(), pos = result_position(r);
  // The indexed shape as index() would return it, then back to [B..., rest...].
  std::vector<int64_t> order = to_result_order(nb, rest.dim(), pos);
  Shape result_shape;
  Shape bshaped = r.bshape;
  for (int64_t s : rest.shape()) bshaped.push_back(s);
  for (int64_t p : order) result_shape.push_back(bshaped[p]);
  broadcast_shapes(result_shape, v.shape(), op);
  DDL_CHECK(v.dim() <= result_shape.size(), op, ": values ", describe(values),
            " cannot be broadcast to the indexed shape ", result_shape);
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  Shape flat = rest.shape();
  flat.insert(0, offsets.numel());
  const Tensor vals = v.expand(result_shape).permute(inverse).contiguous().view(flat);
  if (vals.numel() > 0) kernels::put_kernel(t.device())(rest, offsets, vals, accumulate);
  return t;
}

}  // namespace

const Tensor& index_put_(const Tensor& t, const std::vector<TensorIndex>& indices, const Tensor& values,
                         bool accumulate) {
  return index_put_impl(t, indices, values, accumulate, "index_put_");
}

const Tensor& index_put_(const Tensor& t, const std::vector<TensorIndex>& indices, double value) {
  DDL_CHECK(t.defined(), "index_put_: undefined tensor");
  detail::check_value_fits(value, t.dtype(), "index_put_");  // as PyTorch's x[i] = value
  return index_put_(t, indices, scalar_tensor(value, TensorOptions(t.dtype(), t.device())));
}

Tensor index_put(const Tensor& t, const std::vector<TensorIndex>& indices, const Tensor& values, bool accumulate) {
  Tensor out = t.clone();
  index_put_impl(out, indices, values, accumulate, "index_put");
  return out;
}

Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return ddl::index(*this, indices); }
Tensor Tensor::operator[](const Tensor& index) const { return ddl::index(*this, {index}); }
const Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) const {
  return ddl::index_put_(*this, indices, values);
}
const Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, double value) const {
  return ddl::index_put_(*this, indices, value);
}

Tensor nonzero(const Tensor& t) {
  DDL_CHECK(t.defined(), "nonzero: undefined tensor");
  const TensorOptions i64(DType::Int64, t.device());
  if (t.dim() == 0) return zeros({nonzero(t.reshape({1})).size(0), 0}, i64);  // [1, 0] or [0, 0]
  if (t.numel() == 0) return zeros({0, t.dim()}, i64);
  return kernels::nonzero_kernel(t.device())(t.contiguous());
}

}  // namespace ddl
