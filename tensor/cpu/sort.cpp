// CPU sorting kernels: each row is sorted as a list of indices (std::stable_sort,
// or std::partial_sort with the index as tie-break when only the first k are
// kept), and the scatter of sort_backward. Comparators put NaN above every
// number (torch.sort's order). Rows run in parallel; each row is one thread's.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/ops/sort.h>

namespace ddl::cpu {
namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// a before b when sorting ascending (NaN last) or descending (NaN first).
template <typename T>
bool before(T a, T b, bool descending) {
  if (descending) return a > b || (is_nan(a) && !is_nan(b));
  return a < b || (!is_nan(a) && is_nan(b));
}

// x: [rows, n] -> values, indices: [rows, k]. Ties keep index order.
void sort_rows_cpu(const Tensor& x, int64_t k, bool descending, Tensor& values, Tensor& indices) {
  const int64_t n = x.size(-1);
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  int64_t* ip = indices.data<int64_t>();
  DDL_DISPATCH_NUMERIC(x.dtype(), "sort", [&] {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* vp = values.data<scalar_t>();
    parallel_for(0, rows, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = b; r < e; ++r) {
        const scalar_t* row = xp + r * n;
        std::iota(order.begin(), order.end(), 0);
        auto cmp = [&](int64_t i, int64_t j) { return before(row[i], row[j], descending); };
        if (k == n)
          std::stable_sort(order.begin(), order.end(), cmp);
        else  // index as tie-break: partial_sort is not stable
          std::partial_sort(order.begin(), order.begin() + k, order.end(),
                            [&](int64_t i, int64_t j) { return cmp(i, j) || (!cmp(j, i) && i < j); });
        for (int64_t j = 0; j < k; ++j) {
          vp[r * k + j] = row[order[static_cast<size_t>(j)]];
          ip[r * k + j] = order[static_cast<size_t>(j)];
        }
      }
    });
  });
}

// grad, indices: [rows, k]; grad_x: [rows, n] zeros. Serial: indices may repeat.
void sort_backward_cpu(const Tensor& grad, const Tensor& indices, Tensor& grad_x) {
  const int64_t k = grad.size(-1), n = grad_x.size(-1);
  const int64_t rows = k == 0 ? 0 : grad.numel() / k;
  const int64_t* ip = indices.data<int64_t>();
  DDL_DISPATCH_FLOAT(grad.dtype(), "sort_backward", [&] {
    const scalar_t* gp = grad.data<scalar_t>();
    scalar_t* op = grad_x.data<scalar_t>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) {
        const int64_t i = ip[r * k + j];
        DDL_CHECK(i >= 0 && i < n, "sort_backward: index ", i, " out of range [0, ", n, ")");
        op[r * n + i] += gp[r * k + j];
      }
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::sort_rows_kernel, CPU, &sort_rows_cpu);
DDL_REGISTER_KERNEL(kernels::sort_backward_kernel, CPU, &sort_backward_cpu);

}  // namespace ddl::cpu
