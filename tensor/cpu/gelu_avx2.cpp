// The AVX2+FMA float32 GELU loops (gelu_levels.h), 8 lanes; a chunk's tail through masked
// loads and stores. Compiled with -mavx2 -mfma only (tensor/meson.build) and called only
// when cpu_level() is avx2.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ddl/tensor/cpu/gelu_levels.h>

namespace ddl::cpu::isa {
namespace {
constexpr int64_t kW = 8;
using V = __m256;
using VI = __m256i;
inline __m256i lanes_below(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline V load_n(const float* p, int64_t n) {
  return n == kW ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lanes_below(n));
}
inline void store_n(float* p, V v, int64_t n) {
  if (n == kW) return _mm256_storeu_ps(p, v);
  _mm256_maskstore_ps(p, lanes_below(n), v);
}
}  // namespace

#define FMADD _mm256_fmadd_ps
#define SET1 _mm256_set1_ps
#define SET1I _mm256_set1_epi32
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define MAXP _mm256_max_ps
#define AND _mm256_and_ps
#define ANDNOT _mm256_andnot_ps
#define OR _mm256_or_ps
#define ADDI _mm256_add_epi32
#define SUBI _mm256_sub_epi32
#define SLLI _mm256_slli_epi32
#define CASTI _mm256_castps_si256
#define CASTF _mm256_castsi256_ps
#define CMPLT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define ISNAN(a) _mm256_cmp_ps(a, a, _CMP_UNORD_Q)
#define SELECT(m, a, b) _mm256_blendv_ps(b, a, m)
#define LOADN load_n
#define STOREN store_n
#define GELU_FORWARD gelu_forward_avx2
#define GELU_BACKWARD gelu_backward_avx2
#include <ddl/tensor/cpu/gelu_isa.inc>

}  // namespace ddl::cpu::isa
