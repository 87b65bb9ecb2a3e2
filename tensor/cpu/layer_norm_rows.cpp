// Row normalisation kernels (tensor/cpu/layer_norm_rows.h). Sums run in double over four
// interleaved partial sums, a fixed order whatever the thread count.
#include <algorithm>
#include <cmath>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/layer_norm_rows.h>

namespace ddl::cpu {
namespace {

template <typename F>
double sum4(int64_t k, const F& v) {
  double s[4] = {};
  int64_t i = 0;
  for (; i + 4 <= k; i += 4)
    for (int j = 0; j < 4; ++j) s[j] += v(i + j);
  for (; i < k; ++i) s[i & 3] += v(i);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace

void layer_norm_rows_f32(const float* x, float* xhat, float* invstd, int64_t rows, int64_t k, double eps) {
  const double kd = static_cast<double>(k);
  parallel_for(0, rows, ddl::detail::grain_for(16384, k), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * k;
      float* yr = xhat + r * k;
      const double mean = sum4(k, [&](int64_t i) { return static_cast<double>(xr[i]); }) / kd;
      const double var = sum4(k,
                              [&](int64_t i) {
                                const double c = static_cast<double>(xr[i]) - mean;
                                return c * c;
                              }) /
                         kd;
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < k; ++i) yr[i] = static_cast<float>((static_cast<double>(xr[i]) - mean) * inv);
      invstd[r] = static_cast<float>(inv);
    }
  });
}

void layer_norm_rows_backward_f32(const float* g, const float* xhat, const float* invstd, float* dx, int64_t rows,
                                  int64_t k) {
  const double kd = static_cast<double>(k);
  parallel_for(0, rows, ddl::detail::grain_for(16384, k), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* gr = g + r * k;
      const float* xr = xhat + r * k;
      float* o = dx + r * k;
      const float mg = static_cast<float>(sum4(k, [&](int64_t i) { return static_cast<double>(gr[i]); }) / kd);
      const float mgx = static_cast<float>(sum4(k, [&](int64_t i) { return static_cast<double>(gr[i] * xr[i]); }) / kd);
      const float inv = invstd[r];
      for (int64_t i = 0; i < k; ++i) o[i] = ((gr[i] - mg) - xr[i] * mgx) * inv;
    }
  });
}

}  // namespace ddl::cpu
