// CPU kernels of the index-driven ops (tensor/indexing.h): gather, scatter,
// take and put. Frontends have already checked shapes, dtypes and index ranges;
// these walk strided operands with an odometer. Writes that may collide
// (scatter, put) run serially in index order, so results are deterministic.
#include "tensor/indexing.h"

#include <array>
#include <vector>

#include "tensor/parallel.h"

namespace ddl::cpu {
namespace {

// Calls fn(offsets) for every position of `shape` in row-major order, where
// offsets[k] is the element offset of that position under strides[k].
template <int N, typename Fn>
void for_each_position(const Shape& shape, const std::array<Strides, N>& strides, const Fn& fn) {
  if (shape.numel() == 0) return;
  const int64_t nd = shape.size();
  std::vector<int64_t> pos(static_cast<size_t>(nd), 0);
  std::array<int64_t, N> off{};
  for (int64_t left = shape.numel(); left > 0; --left) {
    fn(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++pos[d] < shape[d]) {
        for (int k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (int k = 0; k < N; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      pos[d] = 0;
    }
  }
}

// The strides of t with the one along `dim` zeroed: the index supplies that coordinate.
Strides without_dim(const Tensor& t, int64_t dim) {
  Strides s = t.strides();
  s[dim] = 0;
  return s;
}

// Element offsets of every position of a view, in row-major order.
std::vector<int64_t> offsets_of(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.numel()));
  for_each_position<1>(t.shape(), {t.strides()}, [&](const std::array<int64_t, 1>& o) { out.push_back(o[0]); });
  return out;
}

// out: index.shape; out[p] = self[p with p[dim] = index[p]]
void gather_cpu(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const int64_t step = self.stride(dim);
  const int64_t* idx = index.data<int64_t>();
  DDL_DISPATCH_ALL(self.dtype(), "gather", [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* s = self.data<scalar_t>();
    for_each_position<3>(index.shape(), {out.strides(), index.strides(), without_dim(self, dim)},
                         [&](const std::array<int64_t, 3>& p) { o[p[0]] = s[p[2] + idx[p[1]] * step]; });
  });
}

// self[p with p[dim] = index[p]] = (or +=) src[p], for every position p of index.
void scatter_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate) {
  const int64_t step = self.stride(dim);
  const int64_t* idx = index.data<int64_t>();
  DDL_DISPATCH_ALL(self.dtype(), "scatter", [&] {
    scalar_t* s = self.data<scalar_t>();
    const scalar_t* v = src.data<scalar_t>();
    for_each_position<3>(index.shape(), {without_dim(self, dim), index.strides(), src.strides()},
                         [&](const std::array<int64_t, 3>& p) {
                           scalar_t& dst = s[p[0] + idx[p[1]] * step];
                           if constexpr (std::is_same_v<scalar_t, bool>) {
                             dst = accumulate ? (dst || v[p[2]]) : v[p[2]];
                           } else {
                             dst = accumulate ? static_cast<scalar_t>(dst + v[p[2]]) : v[p[2]];
                           }
                         });
  });
}

// out: [N, src.shape...] contiguous; out[n, r] = src[offsets[n] + r]
void take_cpu(const Tensor& out, const Tensor& src, const Tensor& offsets) {
  const std::vector<int64_t> rest = offsets_of(src);
  const int64_t row = static_cast<int64_t>(rest.size());
  const int64_t* off = offsets.data<int64_t>();
  DDL_DISPATCH_ALL(src.dtype(), "index", [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* s = src.data<scalar_t>();
    parallel_for(0, offsets.numel(), std::max<int64_t>(1, 16384 / std::max<int64_t>(row, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t n = begin; n < end; ++n)
                     for (int64_t r = 0; r < row; ++r) o[n * row + r] = s[off[n] + rest[r]];
                 });
  });
}

// values: [N, dst.shape...] contiguous; dst[offsets[n] + r] = (or +=) values[n, r]
void put_cpu(const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate) {
  const std::vector<int64_t> rest = offsets_of(dst);
  const int64_t row = static_cast<int64_t>(rest.size());
  const int64_t* off = offsets.data<int64_t>();
  DDL_DISPATCH_ALL(dst.dtype(), "index_put_", [&] {
    scalar_t* d = dst.data<scalar_t>();
    const scalar_t* v = values.data<scalar_t>();
    for (int64_t n = 0; n < offsets.numel(); ++n)
      for (int64_t r = 0; r < row; ++r) {
        scalar_t& x = d[off[n] + rest[r]];
        if constexpr (std::is_same_v<scalar_t, bool>) {
          x = accumulate ? (x || v[n * row + r]) : v[n * row + r];
        } else {
          x = accumulate ? static_cast<scalar_t>(x + v[n * row + r]) : v[n * row + r];
        }
      }
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::gather_kernel, CPU, &gather_cpu);
DDL_REGISTER_KERNEL(kernels::scatter_kernel, CPU, &scatter_cpu);
DDL_REGISTER_KERNEL(kernels::take_kernel, CPU, &take_cpu);
DDL_REGISTER_KERNEL(kernels::put_kernel, CPU, &put_cpu);

}  // namespace ddl::cpu
