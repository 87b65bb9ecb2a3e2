// Scratch harness for ddl::cpu::sgemm: correctness vs a double reference and
// timing vs Eigen and the FMA peak, at the CPU's level (DDL_CPU_LEVEL picks another):
//   ninja -C build bench/sgemm-scratch && DDL_CPU_LEVEL=avx2 build/bench/sgemm-scratch [check|bench|all]
#include <omp.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/fma_peak.h"
#include <ddl/tensor/cpu/sgemm.h>

using ddl::cpu::sgemm;
using Clock = std::chrono::steady_clock;

namespace {

std::mt19937 rng(42);
std::vector<float> rand_vec(size_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// One correctness case; returns false on mismatch.
bool check_case(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, int64_t pad) {
  const int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
  const auto A = rand_vec(size_t((ta ? K : M) * lda + 1));
  const auto B = rand_vec(size_t((tb ? N : K) * ldb + 1));
  const auto C0 = rand_vec(size_t(M * ldc + 1));
  std::vector<float> C = C0;
  if (beta == 0.f)  // must not be read
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = NAN;
  std::vector<float> C1 = C, C2 = C;
  omp_set_num_threads(1);
  sgemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C1.data(), ldc);
  omp_set_num_threads(2);
  sgemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C2.data(), ldc);
  if (std::memcmp(C1.data(), C2.data(), C1.size() * sizeof(float)) != 0) {
    std::printf("  NONDETERMINISTIC ta=%d tb=%d M=%ld N=%ld K=%ld\n", ta, tb, M, N, K);
    return false;
  }
  double max_err = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = C1[size_t(i * ldc + j)];
      if (j >= N) {  // padding must be untouched
        if (std::memcmp(&got, &C[size_t(i * ldc + j)], 4) != 0) return false;
        continue;
      }
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double a = ta ? A[size_t(k * lda + i)] : A[size_t(i * lda + k)];
        const double b = tb ? B[size_t(j * ldb + k)] : B[size_t(k * ldb + j)];
        ref += a * b;
        mag += std::fabs(a * b);
      }
      ref *= alpha;
      mag *= std::fabs(alpha);
      if (beta != 0.f) {
        ref += double(beta) * C0[size_t(i * ldc + j)];
        mag += std::fabs(double(beta) * C0[size_t(i * ldc + j)]);
      }
      const double err = std::fabs(got - ref), tol = 4e-7 * (K + 4) * (mag + 1e-30);
      if (!(err <= tol)) {
        std::printf("  MISMATCH ta=%d tb=%d M=%ld N=%ld K=%ld a=%g b=%g pad=%ld at (%ld,%ld): %g vs %g\n", ta, tb, M, N,
                    K, alpha, beta, pad, i, j, got, ref);
        return false;
      }
      max_err = std::max(max_err, err / (mag + 1e-30));
    }
  return true;
}

int run_checks() {
  const int64_t sizes[] = {1, 2, 3, 7, 8, 9, 16, 17, 31, 32, 33, 65, 127, 129};
  int n = 0, fails = 0;
  std::uniform_int_distribution<int> pick(0, int(std::size(sizes)) - 1);
  const float alphas[] = {1.f, -0.5f, 2.f}, betas[] = {0.f, 1.f, 0.75f};
  for (int it = 0; it < 600; ++it) {
    const bool ta = it & 1, tb = (it >> 1) & 1;
    const int64_t M = sizes[pick(rng)], N = sizes[pick(rng)], K = sizes[pick(rng)];
    const float al = alphas[(it / 4) % 3], be = betas[(it / 12) % 3];
    fails += !check_case(ta, tb, M, N, K, al, be, (it / 36) % 3 == 0 ? 0 : 5);
    ++n;
  }
  struct S {
    int64_t m, n, k;
  };
  for (const S s : {S{1000, 17, 300}, S{65, 1000, 513}, S{300, 300, 1000}, S{129, 4, 4608}, S{512, 16, 700},
                    S{3, 1000, 127}, S{257, 70, 2305}, S{8, 8, 8}, S{1, 1, 1}})
    for (int t = 0; t < 4; ++t)
      for (float be : {0.f, 0.5f}) {
        fails += !check_case(t & 1, t & 2, s.m, s.n, s.k, 1.5f, be, t == 1 ? 0 : 3);
        ++n;
      }
  // K == 0 and M/N == 0 edge cases.
  {
    std::vector<float> C(12, 2.f);
    sgemm(false, false, 3, 4, 0, 1.f, nullptr, 1, nullptr, 4, 0.5f, C.data(), 4);
    bool ok = true;
    for (float x : C) ok &= x == 1.f;
    std::vector<float> D(12, NAN);
    sgemm(false, false, 3, 4, 0, 1.f, nullptr, 1, nullptr, 4, 0.f, D.data(), 4);
    for (float x : D) ok &= x == 0.f;
    sgemm(false, false, 0, 4, 5, 1.f, nullptr, 5, nullptr, 4, 0.f, nullptr, 4);
    sgemm(false, false, 3, 0, 5, 1.f, nullptr, 5, nullptr, 4, 0.f, nullptr, 4);
    fails += !ok;
    n += 1;
  }
  // Called from inside a parallel region: must run single-threaded and agree.
  {
    const int64_t M = 200, N = 150, K = 333;
    const auto A = rand_vec(M * K), B = rand_vec(K * N);
    std::vector<float> C1(M * N), C2(M * N);
    omp_set_num_threads(2);
    sgemm(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C1.data(), N);
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) sgemm(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C2.data(), N);
    }
    fails += std::memcmp(C1.data(), C2.data(), C1.size() * 4) != 0;
    ++n;
  }
  // dgemm (Eigen based): vs the same double reference, and thread-count stable.
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const int64_t M = 77, N = 300, K = 129, lda = (ta ? M : K) + 2, ldb = (tb ? K : N) + 1, ldc = N + 3;
    std::vector<double> A(size_t((ta ? K : M) * lda)), B(size_t((tb ? N : K) * ldb)), C1(size_t(M * ldc), 0.5);
    for (auto& x : A) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    for (auto& x : B) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    std::vector<double> C2 = C1;
    omp_set_num_threads(1);
    ddl::cpu::dgemm(ta, tb, M, N, K, -1.5, A.data(), lda, B.data(), ldb, 0.25, C1.data(), ldc);
    omp_set_num_threads(2);
    ddl::cpu::dgemm(ta, tb, M, N, K, -1.5, A.data(), lda, B.data(), ldb, 0.25, C2.data(), ldc);
    bool ok = std::memcmp(C1.data(), C2.data(), C1.size() * sizeof(double)) == 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0;
        for (int64_t k = 0; k < K; ++k)
          ref += (ta ? A[size_t(k * lda + i)] : A[size_t(i * lda + k)]) *
                 (tb ? B[size_t(j * ldb + k)] : B[size_t(k * ldb + j)]);
        ok &= std::fabs(C1[size_t(i * ldc + j)] - (-1.5 * ref + 0.125)) < 1e-12;
      }
    if (!ok) std::printf("  dgemm MISMATCH ta=%d tb=%d\n", ta, tb);
    fails += !ok;
    ++n;
  }
  std::printf("correctness: %d cases, %d failures\n", n, fails);
  return fails;
}

// The machine is shared (other builds run on the same 2 cores): before each
// timing wait (up to 5 min) until the CPUs are >= 95% idle over 0.3 s.
void wait_idle() {
  auto sample = [](long long& idle, long long& total) {
    FILE* f = std::fopen("/proc/stat", "r");
    long long v[8] = {};
    if (!f || std::fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                          &v[6], &v[7]) != 8) {
      idle = total = 0;
    } else {
      idle = v[3];
      total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    }
    if (f) std::fclose(f);
  };
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < 300) {
    long long i0, t0, i1, t1;
    sample(i0, t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sample(i1, t1);
    if (t1 == t0 || 100 * (i1 - i0) >= 95 * (t1 - t0)) return;
  }
}

double fma_peak(int nt) {
  wait_idle();
  return ddl::bench::fma_peak_gflops(ddl::cpu::cpu_level(), nt);
}

template <typename F>
double time_gflops(F&& f, double flops) {
  wait_idle();
  f();  // warm-up
  double best = 1e30, total = 0;
  for (int rep = 0; rep < 400 && (rep < 5 || total < 0.6); ++rep) {
    const auto t0 = Clock::now();
    f();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, dt);
    total += dt;
  }
  return flops / best / 1e9;
}

void run_bench() {
  const double peak[3] = {0, fma_peak(1), fma_peak(2)};
  std::printf("%s kernels; FMA peak: 1 thread %.1f GFLOP/s, 2 threads %.1f GFLOP/s\n",
              ddl::cpu::cpu_kernels_summary().c_str(), peak[1], peak[2]);
  struct S {
    const char* name;
    bool ta, tb;
    int64_t m, n, k;
  };
  const S shapes[] = {
      {"square", 0, 0, 1024, 1024, 1024},  {"img c1", 0, 0, 64, 1024, 27},      {"img c2", 0, 0, 128, 256, 576},
      {"img c3", 0, 0, 256, 64, 1152},     {"img c4", 0, 0, 256, 64, 2304},     {"img c5", 0, 0, 512, 16, 2304},
      {"img c6", 0, 0, 512, 16, 4608},     {"img c7", 0, 0, 512, 4, 4608},      {"batch c1", 0, 0, 64, 65536, 27},
      {"batch c2", 0, 0, 128, 16384, 576}, {"batch c3", 0, 0, 256, 4096, 1152}, {"batch c4", 0, 0, 256, 4096, 2304},
      {"batch c5", 0, 0, 512, 1024, 2304}, {"batch c6", 0, 0, 512, 1024, 4608}, {"batch c7", 0, 0, 512, 256, 4608},
      {"dW (tB)", 0, 1, 256, 2304, 4096},  {"dX (tA)", 1, 0, 2304, 4096, 256}};
  std::printf("%-9s %5s %6s %5s | %-22s | %-22s\n", "shape", "M", "N", "K", "1 thr: ours / eigen",
              "2 thr: ours / eigen");
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<Mat>;
  // SGEMM_ONLY=substr restricts the shapes; SGEMM_NOEIGEN=1 skips Eigen (tuning).
  const char* only = std::getenv("SGEMM_ONLY");
  const bool no_eigen = std::getenv("SGEMM_NOEIGEN") != nullptr;
  for (const S& s : shapes) {
    if (only && !std::strstr(s.name, only)) continue;
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    auto A = rand_vec(size_t(s.m * s.k)), B = rand_vec(size_t(s.k * s.n));
    std::vector<float> C(size_t(s.m * s.n), 0.f);
    Map a(A.data(), s.ta ? s.k : s.m, s.ta ? s.m : s.k), b(B.data(), s.tb ? s.n : s.k, s.tb ? s.k : s.n);
    Map c(C.data(), s.m, s.n);
    const double flops = 2.0 * s.m * s.n * s.k;
    std::printf("%-9s %5ld %6ld %5ld |", s.name, s.m, s.n, s.k);
    for (int nt : {1, 2}) {
      omp_set_num_threads(nt);
      Eigen::setNbThreads(nt);
      const double ours = time_gflops(
          [&] { sgemm(s.ta, s.tb, s.m, s.n, s.k, 1.f, A.data(), lda, B.data(), ldb, 1.f, C.data(), s.n); }, flops);
      const double eig = no_eigen ? 0.0
                                  : time_gflops(
                                        [&] {
                                          if (s.ta)
                                            c.noalias() += a.transpose() * b;
                                          else if (s.tb)
                                            c.noalias() += a * b.transpose();
                                          else
                                            c.noalias() += a * b;
                                        },
                                        flops);
      std::printf(" %5.1f (%3.0f%%) / %5.1f (%3.0f%%) |", ours, 100 * ours / peak[nt], eig, 100 * eig / peak[nt]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  int fails = 0;
  if (mode == "check" || mode == "all") fails = run_checks();
  if (mode == "bench" || mode == "all") run_bench();
  return fails != 0;
}
