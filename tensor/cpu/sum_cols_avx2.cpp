// The AVX2 column sums of sum_cols_levels.h: the plain loop, which the compiler widens with
// this file's flags only (-mavx2 -mfma, tensor/meson.build); called only when cpu_level() is avx2.
#include <cstdint>

#include <ddl/tensor/cpu/sum_cols_levels.h>

namespace ddl::cpu::isa {

void sum_cols_f32_avx2(const float* in, int64_t A, int64_t C, int64_t c0, int64_t w, double* s) {
  for (int64_t a = 0; a < A; ++a) {
    const float* row = in + a * C + c0;
    for (int64_t j = 0; j < w; ++j) s[j] += static_cast<double>(row[j]);
  }
}

}  // namespace ddl::cpu::isa
