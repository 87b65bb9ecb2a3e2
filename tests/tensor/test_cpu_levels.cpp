// The kernels of one instruction-set level (tensor/cpu/cpu_level.h) against the portable
// reference: sgemm against a double-precision product and sgemm_packed against sgemm, the
// 2x2 max pool bit for bit against the scalar loop, Winograd F(2x2) and F(4x4) against
// float64 convolutions.
// meson runs this program once per level (DDL_TEST_CPU_LEVEL); a level this CPU cannot
// run is reported skipped (exit 77), never passed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "tests/common/error_of.h"
#include "tests/common/skip.h"
#include <ddl/ddl.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/winograd.h>

using ddl::cpu::CpuLevel;
using ddl::test::error_of;

namespace {

// The level named by DDL_TEST_CPU_LEVEL, made current; skips when the CPU cannot run it.
CpuLevel level_under_test() {
  const char* name = std::getenv("DDL_TEST_CPU_LEVEL");
  if (name == nullptr) DDL_SKIP("DDL_TEST_CPU_LEVEL is not set (meson sets it per level)");
  const CpuLevel level = ddl::cpu::parse_cpu_level(name);
  if (!ddl::cpu::cpu_runs(level))
    DDL_SKIP("this CPU cannot run the " << name << " kernels (best level: "
                                        << ddl::cpu::cpu_level_name(ddl::cpu::best_cpu_level()) << ")");
  ddl::cpu::set_cpu_level(level);
  return level;
}

struct GemmCase {
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
};

// C = alpha op(A) op(B) + beta C through the level's sgemm, checked element by element
// against the double product within the float32 rounding bound of a K-term sum.
void check_sgemm(const GemmCase& g, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  const int64_t lda = (g.ta ? g.M : g.K) + 3, ldb = (g.tb ? g.K : g.N) + 1, ldc = g.N + 5;
  std::vector<float> A((g.ta ? g.K : g.M) * lda), B((g.tb ? g.N : g.K) * ldb), C(g.M * ldc);
  for (float& v : A) v = u(rng);
  for (float& v : B) v = u(rng);
  for (float& v : C) v = u(rng);
  std::vector<float> C0 = C;
  ddl::cpu::sgemm(g.ta, g.tb, g.M, g.N, g.K, g.alpha, A.data(), lda, B.data(), ldb, g.beta, C.data(), ldc);
  auto a = [&](int64_t i, int64_t k) { return double(g.ta ? A[k * lda + i] : A[i * lda + k]); };
  auto b = [&](int64_t k, int64_t j) { return double(g.tb ? B[j * ldb + k] : B[k * ldb + j]); };
  for (int64_t i = 0; i < g.M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= g.N) {  // padding columns are never written
        REQUIRE(C[i * ldc + j] == C0[i * ldc + j]);
        continue;
      }
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < g.K; ++k) ref += a(i, k) * b(k, j), mag += std::abs(a(i, k) * b(k, j));
      ref = g.alpha * ref + (g.beta == 0 ? 0.0 : g.beta * C0[i * ldc + j]);
      const double bound = (double(g.K) + 3) * 1.2e-7 * (std::abs(g.alpha) * mag + std::abs(g.beta * C0[i * ldc + j]));
      INFO("ta " << g.ta << " tb " << g.tb << " M " << g.M << " N " << g.N << " K " << g.K << " alpha " << g.alpha
                 << " beta " << g.beta << " at (" << i << ", " << j << ")");
      REQUIRE(std::abs(C[i * ldc + j] - ref) <= bound + 1e-30);
    }
}

}  // namespace

TEST_CASE("sgemm of this level equals the double product on edges and blocks") {
  level_under_test();
  std::mt19937 rng(7);
  // Every row and column edge of the micro-tiles (8x32, 6x16), the small-N path (N <= 8),
  // K across a packed block (256), and the alpha/beta forms the store distinguishes.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      for (int64_t M : {1, 5, 6, 7, 8, 9, 13, 17})
        for (int64_t N : {1, 3, 8, 9, 15, 16, 17, 31, 33, 70}) check_sgemm({ta, tb, M, N, 19, 1.0f, 0.0f}, rng);
      for (int64_t K : {1, 7, 8, 9, 255, 257, 600})
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -2.0f}})
          check_sgemm({ta, tb, 37, 45, K, alpha, beta}, rng);
      check_sgemm({ta, tb, 130, 300, 300, 1.0f, 0.0f}, rng);  // more than one A block (MC) per thread split
    }
}

TEST_CASE("sgemm of this level does not depend on the thread count") {
  level_under_test();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto [M, N, K] : {std::tuple{257, 523, 301}, {64, 4, 1000}, {300, 2000, 27}}) {
    std::vector<float> A(M * K), B(K * N), C1(M * N), C2(M * N);
    for (float& v : A) v = u(rng);
    for (float& v : B) v = u(rng);
    const int threads = ddl::get_num_threads();
    ddl::set_num_threads(1);
    ddl::cpu::sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C1.data(), N);
    ddl::set_num_threads(2);
    ddl::cpu::sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C2.data(), N);
    ddl::set_num_threads(threads);
    REQUIRE(C1 == C2);
  }
}

// B packed by its producer in the layout sgemm.h documents (here by that formula, written
// out independently), then C = A B from it: the same bits as sgemm on the unpacked B
// wherever sgemm packs B itself (N > 8).
TEST_CASE("sgemm_packed of this level equals sgemm on the unpacked operand") {
  const CpuLevel level = level_under_test();
  const ddl::cpu::PackedB none = ddl::cpu::sgemm_packed_b_layout(16, 16);
  if (level == CpuLevel::baseline) {
    REQUIRE(none.floats == 0);  // Eigen's sgemm has no packed form: callers use sgemm
    return;
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  // N on and off the panel width, K within one block and across several (balanced blocks).
  for (auto [M, N, K] : {std::tuple{37, 45, 19}, {64, 512, 512}, {5, 16, 600}, {130, 33, 257}, {9, 1, 8}}) {
    INFO("M " << M << " N " << N << " K " << K);
    const ddl::cpu::PackedB pb = ddl::cpu::sgemm_packed_b_layout(K, N);
    REQUIRE(pb.nr > 0);
    const int64_t np = (N + pb.nr - 1) / pb.nr;
    REQUIRE(pb.floats == np * pb.nr * K);
    std::vector<float> A(M * K), B(K * N), C1(M * N), C2(M * N);
    for (float& v : A) v = u(rng);
    for (float& v : B) v = u(rng);
    ddl::Tensor packed_t = ddl::full({pb.floats}, std::numeric_limits<double>::quiet_NaN());  // 64-byte aligned
    float* packed = packed_t.data<float>();
    for (int64_t pc = 0; pc < K; pc += pb.kc) {
      const int64_t kb = std::min(pb.kc, K - pc);
      for (int64_t k = pc; k < pc + kb; ++k)
        for (int64_t j = 0; j < np * pb.nr; ++j)
          packed[pc * np * pb.nr + (j / pb.nr) * pb.nr * kb + (k - pc) * pb.nr + j % pb.nr] =
              j < N ? B[k * N + j] : 0.0f;
    }
    REQUIRE(std::none_of(packed, packed + pb.floats, [](float v) { return std::isnan(v); }));  // every slot set
    ddl::cpu::sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C1.data(), N);
    ddl::cpu::sgemm_packed(M, N, K, A.data(), K, pb, packed, C2.data(), N);
    if (N > 8) {
      REQUIRE(C1 == C2);
    } else {  // sgemm takes dot products along K for N <= 8: other sums, other roundings
      for (int64_t i = 0; i < M * N; ++i) REQUIRE(std::abs(C1[i] - C2[i]) <= 1e-5f * (1 + std::abs(C1[i])));
    }
  }
  REQUIRE(ddl::cpu::sgemm_packed_b_layout(8, 100000).floats == 0);  // wider than one packed block
  // A B packed for another shape (or level) is refused, not misread.
  ddl::cpu::PackedB other = ddl::cpu::sgemm_packed_b_layout(300, 40);
  other.kc /= 2;
  ddl::Tensor buf = ddl::zeros({other.floats}), a = ddl::zeros({4 * 300}), c = ddl::zeros({4 * 40});
  REQUIRE_THROWS_WITH(
      ddl::cpu::sgemm_packed(4, 40, 300, a.data<float>(), 300, other, buf.data<float>(), c.data<float>(), 40),
      Catch::Contains("packed for another CPU level or shape"));
}

TEST_CASE("2x2 max pool of this level equals the scalar loop bit for bit, NaN and ties included") {
  const CpuLevel level = level_under_test();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(0, 9);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int64_t W : {2, 3, 4, 15, 16, 17, 31, 32, 33, 34, 35, 64, 67}) {
    const int64_t H = 5;
    ddl::Tensor x = ddl::empty({2, 3, H, W});
    float* p = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {  // few distinct values: ties everywhere
      const int v = pick(rng);
      p[i] = v == 0 ? nan : v == 1 ? -inf : v == 2 ? inf : float(v % 4);
    }
    const ddl::Pool2dParams params;  // 2x2, stride 2, no padding
    const auto [y, idx] = ddl::max_pool2d_with_indices(x, params);
    ddl::cpu::set_cpu_level(CpuLevel::baseline);
    const auto [y0, idx0] = ddl::max_pool2d_with_indices(x, params);
    ddl::cpu::set_cpu_level(level);
    INFO("W " << W);
    REQUIRE(std::memcmp(y.data<float>(), y0.data<float>(), sizeof(float) * y.numel()) == 0);
    REQUIRE(std::memcmp(idx.data<int64_t>(), idx0.data<int64_t>(), sizeof(int64_t) * idx.numel()) == 0);
  }
}

TEST_CASE("cpu levels are named, parsed and refused clearly") {
  level_under_test();
  for (CpuLevel l : {CpuLevel::baseline, CpuLevel::avx2, CpuLevel::avx512})
    REQUIRE(ddl::cpu::parse_cpu_level(ddl::cpu::cpu_level_name(l)) == l);
  REQUIRE(error_of([] { ddl::cpu::parse_cpu_level("sse4"); }).find("not one of baseline, avx2, avx512") !=
          std::string::npos);
  REQUIRE(ddl::cpu::cpu_runs(CpuLevel::baseline));
  if (!ddl::cpu::cpu_runs(CpuLevel::avx512))
    REQUIRE(error_of([] { ddl::cpu::set_cpu_level(CpuLevel::avx512); }).find("this CPU cannot run it") !=
            std::string::npos);
  REQUIRE(ddl::cpu::cpu_kernels_summary().rfind(ddl::cpu::cpu_level_name(ddl::cpu::cpu_level()), 0) == 0);
}

TEST_CASE("Winograd convolutions of this level equal the float64 direct sums") {
  level_under_test();
  namespace wg = ddl::cpu::winograd;
  struct ModeGuard {
    ~ModeGuard() { wg::set_mode(wg::Mode::automatic); }
  } guard;
  ddl::Generator gen(5);
  // >= 64 channels, 3x3, stride 1: the float32 Winograd path (float64 takes im2col),
  // F(2x2) and F(4x4) forced in turn. 67 and 70 channels leave partial 16-lane blocks;
  // the sizes and paddings give outputs that are odd, not multiples of 4, smaller
  // than one tile, so that partial 2x2 and 4x4 tiles are clipped and zero padded.
  struct Case {
    int64_t C, O, H, W, pad;
  };
  // 264 channels in or out: more than one 256-deep block of the packed weights (K = C
  // for the forward, O for the input gradient). 4100 out: wider than one packed block,
  // so the forward's weights take the plain row-major layout.
  const Case cases[] = {{64, 64, 8, 8, 1},  {67, 70, 9, 11, 1}, {64, 64, 7, 6, 0},
                        {70, 67, 5, 3, 2},  {64, 64, 3, 3, 1},  {64, 64, 13, 10, 0},
                        {264, 64, 4, 4, 1}, {64, 264, 4, 4, 1}, {64, 4100, 3, 3, 1}};
  // F(4x4)'s transforms carry factors up to 8 and 1/15, so its float32 error is 5-10x
  // F(2x2)'s (docs/tensor.md, "Winograd accuracy": at most 5.7e-6 of the largest result
  // on VGG's layers, F(2x2) 7.7e-7); each bound leaves about 10x headroom over that.
  for (const auto& mode_tol : {std::pair{wg::Mode::f2, 1e-5}, {wg::Mode::f4, 5e-5}}) {
    const wg::Mode mode = mode_tol.first;
    const double tol = mode_tol.second;  // a plain variable: Clang 14 cannot capture bindings
    wg::set_mode(mode);
    for (const Case& c : cases) {
      const ddl::Tensor x = ddl::randn({2, c.C, c.H, c.W}, gen), w = ddl::randn({c.O, c.C, 3, 3}, gen),
                        b = ddl::randn({c.O}, gen);
      ddl::Conv2dParams p;
      p.padding = {c.pad, c.pad};
      const ddl::Tensor y64 =
          ddl::conv2d(x.to(ddl::DType::Float64), w.to(ddl::DType::Float64), b.to(ddl::DType::Float64), p);
      const ddl::Tensor gy = ddl::randn(y64.shape(), gen);
      auto f64 = [](const ddl::Tensor& t) { return t.to(ddl::DType::Float64); };
      auto require_close = [&](const ddl::Tensor& got, const ddl::Tensor& want) {
        const ddl::Tensor g = got.to(ddl::DType::Float64).contiguous(), e = want.contiguous();
        const double* gp = g.data<double>();
        const double* ep = e.data<double>();
        double scale = 0, worst = 0;
        for (int64_t i = 0; i < e.numel(); ++i) scale = std::max(scale, std::abs(ep[i]));
        for (int64_t i = 0; i < e.numel(); ++i) worst = std::max(worst, std::abs(gp[i] - ep[i]));
        INFO("worst " << worst << " scale " << scale);
        REQUIRE(worst <= tol * scale);
      };
      INFO("F(" << (mode == wg::Mode::f4 ? 4 : 2) << ") C " << c.C << " O " << c.O << " H " << c.H << " W " << c.W
                << " pad " << c.pad);
      require_close(ddl::conv2d(x, w, b, p), y64);
      require_close(ddl::conv2d_backward_input(gy, w, x.shape(), p),
                    ddl::conv2d_backward_input(f64(gy), f64(w), x.shape(), p));
      require_close(ddl::conv2d_backward_weight(gy, x, w.shape(), p),
                    ddl::conv2d_backward_weight(f64(gy), f64(x), w.shape(), p));
    }
  }
}
