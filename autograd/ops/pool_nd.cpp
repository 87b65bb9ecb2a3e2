// 1-D and 3-D pooling as compositions of differentiable ops: each spatial dim's
// windows are gathered with index_select into a trailing window axis, which a
// max (max_dim) or a weighted sum reduces. Autograd then gives the gradients
// (and double backward) on every device; speed is not the goal (2-D pooling has
// its own kernels in tensor/ops/pool.h).
#include <algorithm>
#include <array>
#include <string>

#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/pool.h>
#include <ddl/autograd/ops/pool_nd.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/sort.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops.h>
#include <ddl/tensor/ops/math_ops.h>
#include <ddl/tensor/ops/pool.h>

namespace ddl {

namespace {

template <size_t N>
std::string join(const std::array<int64_t, N>& a) {
  std::string s = "[";
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + "]";
}

// Note [Clamped window slots]
// Each output cell of a dim has `len` slots. A slot outside the input (padding, the part of a
// ceil_mode window past the end, or an adaptive window shorter than len) reads the nearest input
// position of its own window instead and is marked invalid: average pooling weighs it 0, and max
// pooling sees a duplicate of a value already in the window. Clamping keeps the window's row-major
// order of first occurrences, so max_dim's first maximum is PyTorch's (the first maximum in the
// window), and the gradient reaches the same input element.
struct DimWindows {
  int64_t in = 0, out = 0, len = 1;
  std::vector<int64_t> pos;       // [out * len] input positions (clamped)
  std::vector<char> valid;        // [out * len] whether the slot is a real input element
  std::vector<int64_t> with_pad;  // [out] positions inside [-pad, in + pad): count_include_pad's divisor
};

void clamp_window(DimWindows& w, int64_t o) {
  int64_t first = -1, last = -1;
  for (int64_t l = 0; l < w.len; ++l) {
    if (!w.valid[o * w.len + l]) continue;
    if (first < 0) first = w.pos[o * w.len + l];
    last = w.pos[o * w.len + l];
  }
  if (first < 0) first = last = 0;  // no real element: cannot happen once the caller's checks passed
  for (int64_t l = 0; l < w.len; ++l) {
    int64_t& p = w.pos[o * w.len + l];
    if (!w.valid[o * w.len + l]) p = p < first ? first : last;
  }
}

DimWindows fixed_windows(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t dil, int64_t out) {
  DimWindows w{in, out, k, std::vector<int64_t>(out * k), std::vector<char>(out * k), std::vector<int64_t>(out)};
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - pad;
    for (int64_t l = 0; l < k; ++l) {
      const int64_t p = start + l * dil;
      w.pos[o * k + l] = p < 0 ? -1 : p;
      w.valid[o * k + l] = p >= 0 && p < in;
    }
    w.with_pad[o] = std::min(start + k, in + pad) - start;  // PyTorch's pool_size (dilation 1)
    clamp_window(w, o);
  }
  return w;
}

DimWindows adaptive_windows(int64_t in, int64_t out) {
  int64_t len = 1;
  for (int64_t o = 0; o < out; ++o) len = std::max(len, adaptive_end(o, in, out) - adaptive_start(o, in, out));
  DimWindows w{in, out, len, std::vector<int64_t>(out * len), std::vector<char>(out * len), std::vector<int64_t>(out)};
  for (int64_t o = 0; o < out; ++o) {
    const int64_t a = adaptive_start(o, in, out), b = adaptive_end(o, in, out);
    for (int64_t l = 0; l < len; ++l) {
      w.pos[o * len + l] = a + l;
      w.valid[o * len + l] = a + l < b;
    }
    w.with_pad[o] = b - a;
    clamp_window(w, o);
  }
  return w;
}

// x: [..., S_1, ..., S_n] -> [..., O_1, ..., O_n, L_1 * ... * L_n] (see Note [Clamped window slots]).
Variable gather_windows(const Variable& x, const std::vector<DimWindows>& ws) {
  const int64_t n = static_cast<int64_t>(ws.size()), lead = x.dim() - n;
  Variable g = x;
  for (int64_t i = 0; i < n; ++i) {
    const DimWindows& w = ws[i];
    g = index_select(g, lead + i, from_vector<int64_t>(w.pos, {w.out * w.len}).to(x.device()));
  }
  std::vector<int64_t> split(x.shape().begin(), x.shape().begin() + lead), perm, merged = split;
  for (int64_t i = 0; i < lead; ++i) perm.push_back(i);
  int64_t l_all = 1;
  for (int64_t i = 0; i < n; ++i) {
    split.push_back(ws[i].out), split.push_back(ws[i].len);
    perm.push_back(lead + 2 * i);
    merged.push_back(ws[i].out);
    l_all *= ws[i].len;
  }
  for (int64_t i = 0; i < n; ++i) perm.push_back(lead + 2 * i + 1);
  merged.push_back(l_all);
  return g.reshape(Shape(split)).permute(perm).reshape(Shape(merged));
}

// Per output cell and slot, a value from each dim's windows, as a [O_1, ..., O_n, L] table.
template <typename T, typename F>
std::vector<T> cell_table(const std::vector<DimWindows>& ws, F f) {
  const int64_t n = static_cast<int64_t>(ws.size());
  int64_t cells = 1, l_all = 1;
  for (const DimWindows& w : ws) cells *= w.out, l_all *= w.len;
  std::vector<T> t(cells * l_all);
  std::vector<int64_t> o(n), l(n);
  for (int64_t c = 0; c < cells; ++c) {
    for (int64_t i = n - 1, r = c; i >= 0; --i) o[i] = r % ws[i].out, r /= ws[i].out;
    for (int64_t s = 0; s < l_all; ++s) {
      for (int64_t i = n - 1, r = s; i >= 0; --i) l[i] = r % ws[i].len, r /= ws[i].len;
      t[c * l_all + s] = f(o, l);
    }
  }
  return t;
}

Shape cell_shape(const std::vector<DimWindows>& ws, bool with_slots) {
  std::vector<int64_t> s;
  int64_t l_all = 1;
  for (const DimWindows& w : ws) s.push_back(w.out), l_all *= w.len;
  if (with_slots) s.push_back(l_all);
  return Shape(s);
}

// Checks shared by every pooling op over n spatial dims: a defined [N, C, *S] or [C, *S] input
// whose non-batch dims are non-empty.
void check_input(const Variable& x, int64_t n, const char* op) {
  DDL_CHECK(x.defined(), op, ": input is undefined");
  DDL_CHECK(x.dim() == n + 1 || x.dim() == n + 2, op, ": expected a ", n + 1, "-D (unbatched) or ", n + 2,
            "-D (batched) input, got ", x.shape());
  for (int64_t d = x.dim() - n - 1; d < x.dim(); ++d)
    DDL_CHECK(x.size(d) > 0, op, ": expected non-empty non-batch dims, got input ", x.shape());
}

void check_float(const Variable& x, const char* op) {
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a floating-point input, got ", dtype_name(x.dtype()));
}

template <size_t N>
struct PoolArgs {
  std::array<int64_t, N> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

// Validates p against x (as PyTorch does) and returns each dim's windows.
template <size_t N>
std::vector<DimWindows> pool_windows(const Variable& x, PoolArgs<N>& p, const char* op) {
  check_input(x, N, op);
  for (size_t i = 0; i < N; ++i) {
    if (p.stride[i] == 0) p.stride[i] = p.kernel[i];
    DDL_CHECK(p.kernel[i] > 0 && p.stride[i] > 0 && p.dilation[i] > 0, op, ": kernel_size ", join(p.kernel),
              ", stride ", join(p.stride), " and dilation ", join(p.dilation), " must be positive");
    DDL_CHECK(p.padding[i] >= 0 && p.padding[i] <= p.kernel[i] / 2, op, ": padding ", join(p.padding),
              " must be non-negative and at most half of kernel_size ", join(p.kernel));
  }
  std::vector<DimWindows> ws;
  std::array<int64_t, N> out{};
  for (size_t i = 0; i < N; ++i) {
    const int64_t in = x.size(x.dim() - static_cast<int64_t>(N) + static_cast<int64_t>(i));
    out[i] = pool_out_size(in, p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
  }
  for (size_t i = 0; i < N; ++i) {
    DDL_CHECK(out[i] >= 1, op, ": input ", x.shape(), " is too small for kernel_size ", join(p.kernel),
              " with padding ", join(p.padding), " and dilation ", join(p.dilation), " (output size ", join(out), ")");
    const int64_t in = x.size(x.dim() - static_cast<int64_t>(N) + static_cast<int64_t>(i));
    ws.push_back(fixed_windows(in, p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], out[i]));
  }
  return ws;
}

// Flat input positions of each cell's slots, row-major over the spatial dims.
std::vector<int64_t> flat_positions(const std::vector<DimWindows>& ws) {
  return cell_table<int64_t>(ws, [&](const std::vector<int64_t>& o, const std::vector<int64_t>& l) {
    int64_t f = 0;
    for (size_t i = 0; i < ws.size(); ++i) f = f * ws[i].in + ws[i].pos[o[i] * ws[i].len + l[i]];
    return f;
  });
}

// Note [NaN maxima]
// PyTorch's max pooling kernels replace the running maximum by every NaN they meet, so a window
// holding several NaNs reports its last one (in row-major window order), while max_dim reports the
// first. Such windows read the last NaN slot instead, through gather, which routes the gradient
// there. Under clamping (Note [Clamped window slots]) the last NaN slot is a copy of the last NaN.
std::pair<Variable, Tensor> window_max(const Variable& x, const std::vector<DimWindows>& ws) {
  const Variable g = gather_windows(x, ws);
  const ValuesIndices<Variable> m = max_dim(g, -1);
  std::vector<int64_t> slot = to_vector<int64_t>(m.indices.to(Device::cpu()));
  Variable values = m.values;
  const std::vector<double> vals = to_vector<double>(m.values.data().to(DType::Float64).to(Device::cpu()));
  if (std::any_of(vals.begin(), vals.end(), [](double v) { return v != v; })) {  // See Note [NaN maxima]
    const std::vector<double> gv = to_vector<double>(g.data().to(DType::Float64).to(Device::cpu()));
    const int64_t len = g.size(-1);
    for (size_t j = 0; j < vals.size(); ++j)
      if (vals[j] != vals[j])
        for (int64_t l = len - 1; l >= 0; --l)
          if (gv[j * len + l] != gv[j * len + l]) {
            slot[j] = l;
            break;
          }
    const Tensor st = from_vector<int64_t>(slot, m.indices.shape()).to(x.device());
    values = gather(g, -1, st.unsqueeze(-1)).squeeze(-1);
  }
  // Slot indices to input positions: the table broadcast over the leading dims.
  const std::vector<int64_t> table = flat_positions(ws);
  int64_t l_all = 1;
  for (const DimWindows& w : ws) l_all *= w.len;
  const int64_t cells = static_cast<int64_t>(table.size()) / l_all;
  std::vector<int64_t> idx(slot.size());
  for (size_t j = 0; j < slot.size(); ++j) idx[j] = table[(static_cast<int64_t>(j) % cells) * l_all + slot[j]];
  return {values, from_vector<int64_t>(idx, m.indices.shape()).to(x.device())};
}

// Sum of each window's slots times weight[cell, slot]; integer inputs divide with truncation.
Variable window_weighted_sum(const Variable& x, const std::vector<DimWindows>& ws, const std::vector<double>& valid,
                             const std::vector<double>& divisor) {
  const Variable g = gather_windows(x, ws);
  const Shape ts = cell_shape(ws, true), cs = cell_shape(ws, false);
  if (!is_floating(x.dtype())) {  // int64: the exact sum, divided with truncation as PyTorch's CPU kernel
    const Tensor s = sum(g.data() * from_vector<double>(valid, ts).to(x.dtype()).to(x.device()), {-1});
    // In float64 (exact below 2^53), truncated toward zero as C++ integer division.
    const Tensor d = from_vector<double>(divisor, cs).to(x.device());
    return Variable(detail::div_trunc(s.to(DType::Float64), d).to(x.dtype()));
  }
  std::vector<double> w(valid.size());
  const size_t l_all = valid.size() / std::max<size_t>(divisor.size(), 1);
  for (size_t j = 0; j < w.size(); ++j) w[j] = valid[j] / divisor[j / l_all];
  return sum(g * Variable(from_vector<double>(w, ts).to(x.dtype()).to(x.device())), {-1});
}

std::vector<double> valid_table(const std::vector<DimWindows>& ws) {
  return cell_table<double>(ws, [&](const std::vector<int64_t>& o, const std::vector<int64_t>& l) {
    double v = 1;
    for (size_t i = 0; i < ws.size(); ++i) v *= ws[i].valid[o[i] * ws[i].len + l[i]];
    return v;
  });
}

// One value per cell: the product over dims of f(window, cell).
template <typename F>
std::vector<double> per_cell(const std::vector<DimWindows>& ws, F f) {
  std::vector<DimWindows> one = ws;
  for (DimWindows& w : one) w.len = 1;
  return cell_table<double>(one, [&](const std::vector<int64_t>& o, const std::vector<int64_t>&) {
    double v = 1;
    for (size_t i = 0; i < ws.size(); ++i) v *= f(ws[i], o[i]);
    return v;
  });
}

// float16 and bfloat16 are pooled in float32 and rounded once (See Note [Half compute] in tensor/core/half.h).
bool reduced(const Variable& x) { return x.defined() && is_reduced_float(x.dtype()); }

template <size_t N>
std::pair<Variable, Tensor> max_pool_nd(const Variable& x, PoolArgs<N> p, const char* op) {
  const std::vector<DimWindows> ws = pool_windows(x, p, op);
  check_float(x, op);
  if (reduced(x)) {
    auto [y, idx] = window_max(x.to(DType::Float32), ws);
    return {y.to(x.dtype()), idx};
  }
  return window_max(x, ws);
}

template <size_t N>
Variable avg_pool_nd(const Variable& x, PoolArgs<N> p, bool count_include_pad, const char* op) {
  const std::vector<DimWindows> ws = pool_windows(x, p, op);
  DDL_CHECK(is_floating(x.dtype()) || x.dtype() == DType::Int64, op, ": expected a floating-point or int64 input, got ",
            dtype_name(x.dtype()));
  if (reduced(x)) return avg_pool_nd(x.to(DType::Float32), p, count_include_pad, op).to(x.dtype());
  const std::vector<double> valid = valid_table(ws);
  const std::vector<double> div = per_cell(ws, [&](const DimWindows& w, int64_t o) {
    if (count_include_pad) return static_cast<double>(w.with_pad[o]);
    double n = 0;
    for (int64_t l = 0; l < w.len; ++l) n += w.valid[o * w.len + l];
    return n;
  });
  return window_weighted_sum(x, ws, valid, div);
}

template <size_t N>
std::vector<DimWindows> adaptive_windows_of(const Variable& x, const std::array<int64_t, N>& out, const char* op) {
  check_input(x, N, op);
  check_float(x, op);
  std::vector<DimWindows> ws;
  for (size_t i = 0; i < N; ++i) {
    DDL_CHECK(out[i] >= 0, op, ": output_size ", join(out), " must be non-negative");
    ws.push_back(adaptive_windows(x.size(x.dim() - static_cast<int64_t>(N) + static_cast<int64_t>(i)), out[i]));
  }
  return ws;
}

template <size_t N>
std::pair<Variable, Tensor> adaptive_max_nd(const Variable& x, const std::array<int64_t, N>& out, const char* op) {
  const std::vector<DimWindows> ws = adaptive_windows_of(x, out, op);
  if (reduced(x)) {
    auto [y, idx] = window_max(x.to(DType::Float32), ws);
    return {y.to(x.dtype()), idx};
  }
  return window_max(x, ws);
}

template <size_t N>
Variable adaptive_avg_nd(const Variable& x, const std::array<int64_t, N>& out, const char* op) {
  const std::vector<DimWindows> ws = adaptive_windows_of(x, out, op);
  if (reduced(x)) return adaptive_avg_nd(x.to(DType::Float32), out, op).to(x.dtype());
  const std::vector<double> div =
      per_cell(ws, [](const DimWindows& w, int64_t o) { return static_cast<double>(w.with_pad[o]); });
  return window_weighted_sum(x, ws, valid_table(ws), div);
}

// PyTorch's lp_pool: (sign(a) * relu(|a|) * window size)^(1/p) with a = avg_pool(x^p), no
// padding; sign is a constant there, so the gradient is PyTorch's too.
template <size_t N>
Variable lp_pool_nd(const Variable& x, double norm_type, PoolArgs<N> p, const char* op) {
  check_input(x, N, op);
  check_float(x, op);
  const Variable a = avg_pool_nd(pow(x, norm_type), p, true, op);
  double window = 1;
  for (size_t i = 0; i < N; ++i) window *= static_cast<double>(p.kernel[i]);
  return pow(relu(abs(a)) * Variable(sign(a.data())) * window, 1.0 / norm_type);
}

template <size_t N>
Variable max_unpool_nd(const Variable& x, const Tensor& indices, std::array<int64_t, N> k, std::array<int64_t, N> s,
                       std::array<int64_t, N> pad, const std::optional<std::vector<int64_t>>& output_size,
                       const char* op) {
  check_input(x, N, op);
  DDL_CHECK(indices.defined() && indices.dtype() == DType::Int64, op, ": indices must be int64, got ",
            indices.defined() ? dtype_name(indices.dtype()) : "an undefined tensor");
  DDL_CHECK(indices.shape() == x.shape(), op, ": indices ", indices.shape(), " must have the input's shape ",
            x.shape());
  const int64_t lead = x.dim() - static_cast<int64_t>(N);
  std::array<int64_t, N> out{};
  for (size_t i = 0; i < N; ++i) {
    if (s[i] == 0) s[i] = k[i];
    DDL_CHECK(k[i] > 0 && s[i] > 0 && pad[i] >= 0, op, ": kernel_size ", join(k), " and stride ", join(s),
              " must be positive and padding ", join(pad), " non-negative");
    out[i] = (x.size(lead + static_cast<int64_t>(i)) - 1) * s[i] + k[i] - 2 * pad[i];
  }
  if (output_size) {  // as torch.nn.functional._unpool_output_size
    std::vector<int64_t> o = *output_size;
    if (o.size() == N + 2) o.erase(o.begin(), o.begin() + 2);
    DDL_CHECK(o.size() == N, op, ": output_size must hold ", N, " or ", N + 2, " sizes, got ", output_size->size());
    for (size_t i = 0; i < N; ++i) {
      DDL_CHECK(o[i] > out[i] - s[i] && o[i] < out[i] + s[i], op, ": output_size dim ", i, " is ", o[i],
                ", which must lie strictly between ", out[i] - s[i], " and ", out[i] + s[i]);
      out[i] = o[i];
    }
  }
  int64_t rows = 1, in_numel = 1, out_numel = 1;
  for (int64_t d = 0; d < lead; ++d) rows *= x.size(d);
  for (size_t i = 0; i < N; ++i) {
    in_numel *= x.size(lead + static_cast<int64_t>(i));
    DDL_CHECK(out[i] > 0, op, ": the output size ", join(out), " must be positive (input ", x.shape(), ")");
    out_numel *= out[i];
  }
  for (int64_t v : to_vector<int64_t>(indices.to(Device::cpu())))
    DDL_CHECK(v >= 0 && v < out_numel, op, ": found an invalid max index ", v, " for an output of size ", join(out));
  std::vector<int64_t> ys(x.shape().begin(), x.shape().begin() + lead);
  ys.insert(ys.end(), out.begin(), out.end());
  const Variable zero(zeros({rows, out_numel}, TensorOptions(x.dtype(), x.device())));
  return scatter(zero, 1, indices.contiguous().reshape({rows, in_numel}), x.reshape({rows, in_numel}))
      .reshape(Shape(ys));
}

PoolArgs<1> args1(int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) { return {{k}, {s}, {p}, {d}, ceil}; }
PoolArgs<3> args3(ExpandingArray<3> k, ExpandingArray<3> s, ExpandingArray<3> p, ExpandingArray<3> d, bool ceil) {
  return {k.value(), s.value(), p.value(), d.value(), ceil};
}

}  // namespace

std::pair<Variable, Tensor> max_pool1d_with_indices(const Variable& x, int64_t kernel, int64_t stride, int64_t padding,
                                                    int64_t dilation, bool ceil_mode) {
  return max_pool_nd(x, args1(kernel, stride, padding, dilation, ceil_mode), "max_pool1d_with_indices");
}
Variable max_pool1d(const Variable& x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                    bool ceil_mode) {
  return max_pool_nd(x, args1(kernel, stride, padding, dilation, ceil_mode), "max_pool1d").first;
}
std::pair<Variable, Tensor> max_pool3d_with_indices(const Variable& x, ExpandingArray<3> kernel,
                                                    ExpandingArray<3> stride, ExpandingArray<3> padding,
                                                    ExpandingArray<3> dilation, bool ceil_mode) {
  return max_pool_nd(x, args3(kernel, stride, padding, dilation, ceil_mode), "max_pool3d_with_indices");
}
Variable max_pool3d(const Variable& x, ExpandingArray<3> kernel, ExpandingArray<3> stride, ExpandingArray<3> padding,
                    ExpandingArray<3> dilation, bool ceil_mode) {
  return max_pool_nd(x, args3(kernel, stride, padding, dilation, ceil_mode), "max_pool3d").first;
}

std::pair<Variable, Tensor> max_pool2d_with_indices(const Variable& x, const Pool2dParams& p) {
  Variable y = max_pool2d(x, p);  // checks x and p
  return {y, max_pool2d_with_indices(x.data(), p, "max_pool2d_with_indices").second};
}

Variable avg_pool1d(const Variable& x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode,
                    bool count_include_pad) {
  return avg_pool_nd(x, args1(kernel, stride, padding, 1, ceil_mode), count_include_pad, "avg_pool1d");
}
Variable avg_pool3d(const Variable& x, ExpandingArray<3> kernel, ExpandingArray<3> stride, ExpandingArray<3> padding,
                    bool ceil_mode, bool count_include_pad) {
  return avg_pool_nd(x, args3(kernel, stride, padding, 1, ceil_mode), count_include_pad, "avg_pool3d");
}

Variable adaptive_avg_pool1d(const Variable& x, int64_t output_size) {
  return adaptive_avg_nd<1>(x, {output_size}, "adaptive_avg_pool1d");
}
Variable adaptive_avg_pool3d(const Variable& x, ExpandingArray<3> output_size) {
  return adaptive_avg_nd<3>(x, output_size.value(), "adaptive_avg_pool3d");
}
std::pair<Variable, Tensor> adaptive_max_pool1d_with_indices(const Variable& x, int64_t output_size) {
  return adaptive_max_nd<1>(x, {output_size}, "adaptive_max_pool1d_with_indices");
}
std::pair<Variable, Tensor> adaptive_max_pool3d_with_indices(const Variable& x, ExpandingArray<3> output_size) {
  return adaptive_max_nd<3>(x, output_size.value(), "adaptive_max_pool3d_with_indices");
}
Variable adaptive_max_pool1d(const Variable& x, int64_t output_size) {
  return adaptive_max_nd<1>(x, {output_size}, "adaptive_max_pool1d").first;
}
Variable adaptive_max_pool3d(const Variable& x, ExpandingArray<3> output_size) {
  return adaptive_max_nd<3>(x, output_size.value(), "adaptive_max_pool3d").first;
}

Variable lp_pool1d(const Variable& x, double norm_type, int64_t kernel, int64_t stride, bool ceil_mode) {
  return lp_pool_nd(x, norm_type, args1(kernel, stride, 0, 1, ceil_mode), "lp_pool1d");
}
Variable lp_pool2d(const Variable& x, double norm_type, ExpandingArray<2> kernel, ExpandingArray<2> stride,
                   bool ceil_mode) {
  return lp_pool_nd(x, norm_type, PoolArgs<2>{kernel.value(), stride.value(), {0, 0}, {1, 1}, ceil_mode}, "lp_pool2d");
}

Variable max_unpool1d(const Variable& x, const Tensor& indices, int64_t kernel, int64_t stride, int64_t padding,
                      std::optional<std::vector<int64_t>> output_size) {
  return max_unpool_nd<1>(x, indices, {kernel}, {stride}, {padding}, output_size, "max_unpool1d");
}
Variable max_unpool2d(const Variable& x, const Tensor& indices, ExpandingArray<2> kernel, ExpandingArray<2> stride,
                      ExpandingArray<2> padding, std::optional<std::vector<int64_t>> output_size) {
  return max_unpool_nd<2>(x, indices, kernel, stride, padding, output_size, "max_unpool2d");
}
Variable max_unpool3d(const Variable& x, const Tensor& indices, ExpandingArray<3> kernel, ExpandingArray<3> stride,
                      ExpandingArray<3> padding, std::optional<std::vector<int64_t>> output_size) {
  return max_unpool_nd<3>(x, indices, kernel, stride, padding, output_size, "max_unpool3d");
}

}  // namespace ddl
