// CPU kernels of the index-driven ops (tensor/ops/indexing.h): gather, scatter,
// take, put and nonzero. Frontends have already checked shapes, dtypes and index ranges;
// gather and scatter walk their operands with StridedLoop (cpu/loops.h), take and
// put with precomputed offsets. Writes that may collide (scatter, put) run
// serially in index order, so results are deterministic.
#include <array>
#include <limits>
#include <vector>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/loops.h>
#include <ddl/tensor/ops/indexing.h>

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

// t viewed at the positions of `index` (t may be larger in every dim), with the
// stride along `dim` zeroed: the index supplies that coordinate. dim < 0: none zeroed.
Tensor along_index(const Tensor& t, const Tensor& index, int64_t dim) {
  Strides s = t.strides();
  if (dim >= 0) s[dim] = 0;
  return Tensor(t.storage(), index.shape(), s, t.offset(), t.dtype());
}

// Element offsets of every position of a view, in row-major order.
std::vector<int64_t> offsets_of(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.numel()));
  for_each_position<1>(t.shape(), {t.strides()}, [&](const std::array<int64_t, 1>& o) { out.push_back(o[0]); });
  return out;
}

template <typename T>
T& at(char* p, int64_t byte_offset) {
  return *reinterpret_cast<T*>(p + byte_offset);
}

// out: index.shape; out[p] = self[p with p[dim] = index[p]]. Rows run in parallel (disjoint writes).
void gather_cpu(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const Tensor base = along_index(self, index, dim);
  const int64_t step = self.stride(dim) * static_cast<int64_t>(self.element_size());
  const StridedLoop<3> loop({&out, &index, &base});
  DDL_DISPATCH_ALL_AND_HALF(self.dtype(), "gather", [&] {
    loop.run([&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& st, int64_t n) {
      if (st[1] == 0) {  // one index for the whole row (index_select's broadcast index): a strided copy
        char* from = p[2] + at<int64_t>(p[1], 0) * step;
        for (int64_t i = 0; i < n; ++i) at<scalar_t>(p[0], i * st[0]) = at<scalar_t>(from, i * st[2]);
        return;
      }
      for (int64_t i = 0; i < n; ++i)
        at<scalar_t>(p[0], i * st[0]) = at<scalar_t>(p[2], i * st[2] + at<int64_t>(p[1], i * st[1]) * step);
    });
  });
}

// self[p with p[dim] = index[p]] = (or +=) src[p], for every position p of index, in
// row-major order on one thread: repeated indices collide, and the last write wins.
void scatter_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate) {
  const Tensor base = along_index(self, index, dim), from = along_index(src, index, -1);
  const int64_t step = self.stride(dim) * static_cast<int64_t>(self.element_size());
  const StridedLoop<3> loop({&base, &index, &from});
  DDL_DISPATCH_ALL_AND_HALF(self.dtype(), "scatter", [&] {
    loop.run(
        [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& st, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            scalar_t& dst = at<scalar_t>(p[0], i * st[0] + at<int64_t>(p[1], i * st[1]) * step);
            const scalar_t v = at<scalar_t>(p[2], i * st[2]);
            if constexpr (std::is_same_v<scalar_t, bool>) {
              dst = accumulate ? static_cast<scalar_t>(dst || v) : v;
            } else {
              dst = accumulate ? static_cast<scalar_t>(dst + v) : v;
            }
          }
        },
        std::numeric_limits<int64_t>::max());
  });
}

// out: [N, src.shape...] contiguous; out[n, r] = src[offsets[n] + r]
void take_cpu(const Tensor& out, const Tensor& src, const Tensor& offsets) {
  const std::vector<int64_t> rest = offsets_of(src);
  const int64_t row = static_cast<int64_t>(rest.size());
  const int64_t* off = offsets.data<int64_t>();
  DDL_DISPATCH_ALL_AND_HALF(src.dtype(), "index", [&] {
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* s = src.data<scalar_t>();
    parallel_for(0, offsets.numel(), ddl::detail::grain_for(16384, row), [&](int64_t begin, int64_t end) {
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
  DDL_DISPATCH_ALL_AND_HALF(dst.dtype(), "index_put_", [&] {
    scalar_t* d = dst.data<scalar_t>();
    const scalar_t* v = values.data<scalar_t>();
    for (int64_t n = 0; n < offsets.numel(); ++n)
      for (int64_t r = 0; r < row; ++r) {
        scalar_t& x = d[off[n] + rest[r]];
        if constexpr (std::is_same_v<scalar_t, bool>) {
          x = accumulate ? static_cast<scalar_t>(x || v[n * row + r]) : v[n * row + r];
        } else {
          x = accumulate ? static_cast<scalar_t>(x + v[n * row + r]) : v[n * row + r];
        }
      }
  });
}

// t: contiguous, at least one dim; coordinates of its nonzero elements in row-major order.
Tensor nonzero_cpu(const Tensor& t) {
  const int64_t nd = t.dim();
  std::vector<int64_t> coords;
  std::vector<int64_t> pos(static_cast<size_t>(nd), 0);
  DDL_DISPATCH_ALL_AND_HALF(t.dtype(), "nonzero", [&] {
    const scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (p[i] != scalar_t(0)) coords.insert(coords.end(), pos.begin(), pos.end());
      for (int64_t d = nd - 1; d >= 0 && ++pos[d] == t.size(d); --d) pos[d] = 0;
    }
  });
  return from_vector(coords, {static_cast<int64_t>(coords.size()) / nd, nd});
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::nonzero_kernel, CPU, &nonzero_cpu);
DDL_REGISTER_KERNEL(kernels::gather_kernel, CPU, &gather_cpu);
DDL_REGISTER_KERNEL(kernels::scatter_kernel, CPU, &scatter_cpu);
DDL_REGISTER_KERNEL(kernels::take_kernel, CPU, &take_cpu);
DDL_REGISTER_KERNEL(kernels::put_kernel, CPU, &put_cpu);

}  // namespace ddl::cpu
