// The AVX-512 float32 GELU loops (gelu_levels.h), 16 lanes; a chunk's tail through masked
// loads and stores. Compiled with the AVX-512 flags only (tensor/meson.build) and called
// only when cpu_level() is avx512.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ddl/tensor/cpu/gelu_levels.h>

namespace ddl::cpu::isa {
namespace {
constexpr int64_t kW = 16;
using V = __m512;
using VI = __m512i;
inline V load_n(const float* p, int64_t n) {
  return n == kW ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
}
inline void store_n(float* p, V v, int64_t n) {
  if (n == kW) return _mm512_storeu_ps(p, v);
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
}
}  // namespace

#define FMADD _mm512_fmadd_ps
#define SET1 _mm512_set1_ps
#define SET1I _mm512_set1_epi32
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define MUL _mm512_mul_ps
#define MAXP _mm512_max_ps
#define AND _mm512_and_ps
#define ANDNOT _mm512_andnot_ps
#define OR _mm512_or_ps
#define ADDI _mm512_add_epi32
#define SUBI _mm512_sub_epi32
#define SLLI _mm512_slli_epi32
#define CASTI _mm512_castps_si512
#define CASTF _mm512_castsi512_ps
#define CMPLT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define ISNAN(a) _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q)
#define SELECT(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define LOADN load_n
#define STOREN store_n
#define GELU_FORWARD gelu_forward_avx512
#define GELU_BACKWARD gelu_backward_avx512
#include <ddl/tensor/cpu/gelu_isa.inc>

}  // namespace ddl::cpu::isa
