// Rows: inverse, det, solve, cholesky, qr, svd (tensor/ops/linalg_decomp.h, autograd/ops/linalg_decomp.h).
#include "sweep.h"

namespace ddl::sweep {
namespace {

// A batch of well-conditioned n x n matrices (random plus n on the diagonal), so gradients are tame.
Input well(DType t, std::vector<int64_t> shape, uint64_t seed, double diag = -1) {
  Input in = make(DType::Float64, shape, seed, -1.0, 1.0);
  const int64_t n = shape.back();
  for (size_t i = 0; i < in.values.size(); ++i)
    if (static_cast<int64_t>(i % (n * n)) / n == static_cast<int64_t>(i % n)) in.values[i] += diag < 0 ? n : diag;
  in.dtype = t;
  return in;
}

// Symmetric positive-definite: M M^T + n I for one matrix M of the seed.
Input spd(DType t, int64_t n, uint64_t seed) {
  const Input m = make(DType::Float64, {n, n}, seed, -1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = i == j ? static_cast<double>(n) : 0.0;
      for (int64_t k = 0; k < n; ++k) s += m.values[i * n + k] * m.values[j * n + k];
      v[i * n + j] = s;
    }
  return of(t, {n, n}, v);
}

std::vector<Sample> square_samples(bool refuse_singular) {
  std::vector<Sample> v;
  uint64_t s = 3000;
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"3x3 " + n, {well(t, {3, 3}, s++)}});
    v.push_back({"batch 2x4x4 " + n, {well(t, {2, 4, 4}, s++)}});
    v.push_back({"1x1 " + n, {well(t, {1, 1}, s++)}});
    v.push_back({"transposed " + n, {with_layout(well(t, {3, 3}, s++), "transposed")}});
  }
  v.push_back({"random 4x4", {make(DType::Float64, {4, 4}, s++)}});
  v.push_back({"batch 2x1x3x3", {well(DType::Float64, {2, 1, 3, 3}, s++)}});
  v.push_back({"0x0", {make(DType::Float64, {0, 0}, s++)}});
  v.push_back({"empty batch", {make(DType::Float64, {0, 3, 3}, s++)}});
  if (refuse_singular) v.push_back({"singular", {of(DType::Float64, {2, 2}, {1, 2, 2, 4})}});
  v.push_back({"not square", {make(DType::Float64, {2, 3}, s++)}});
  v.push_back({"1-d", {make(DType::Float64, {3}, s++)}});
  for (DType t : {DType::Float16, DType::Int64})
    v.push_back({std::string("3x3 ") + short_name(t), {make(t, {3, 3}, s++)}});
  return v;
}

std::vector<Sample> solve_samples() {
  std::vector<Sample> v;
  uint64_t s = 3100;
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"matrix " + n, {well(t, {3, 3}, s++), make(t, {3, 2}, s++)}});
    v.push_back({"vector " + n, {well(t, {3, 3}, s++), make(t, {3}, s++)}});
    v.push_back({"batch " + n, {well(t, {2, 3, 3}, s++), make(t, {2, 3, 4}, s++)}});
  }
  v.push_back({"batch vector", {well(DType::Float64, {2, 3, 3}, s++), make(DType::Float64, {2, 3}, s++)}});
  v.push_back({"1-d B broadcast", {well(DType::Float64, {2, 3, 3}, s++), make(DType::Float64, {3}, s++)}});
  v.push_back({"B batch broadcast", {well(DType::Float64, {3, 3}, s++), make(DType::Float64, {2, 3, 1}, s++)}});
  v.push_back({"transposed",
               {with_layout(well(DType::Float64, {3, 3}, s++), "transposed"), make(DType::Float64, {3, 2}, s++)}});
  v.push_back({"singular", {of(DType::Float64, {2, 2}, {1, 2, 2, 4}), make(DType::Float64, {2}, s++)}});
  v.push_back({"bad B", {well(DType::Float64, {3, 3}, s++), make(DType::Float64, {2}, s++)}});
  v.push_back({"not square", {make(DType::Float64, {2, 3}, s++), make(DType::Float64, {2}, s++)}});
  v.push_back({"0x0", {make(DType::Float64, {0, 0}, s++), make(DType::Float64, {0, 2}, s++)}});
  return v;
}

std::vector<Sample> cholesky_samples() {
  std::vector<Sample> v;
  uint64_t s = 3200;
  for (DType t : {DType::Float32, DType::Float64}) {
    v.push_back({std::string("spd 3x3 ") + short_name(t), {spd(t, 3, s++)}});
    v.push_back({std::string("spd 5x5 ") + short_name(t), {spd(t, 5, s++)}});
  }
  v.push_back({"1x1", {of(DType::Float64, {1, 1}, {4})}});
  v.push_back({"identity batch", {of(DType::Float64, {2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 3})}});
  v.push_back({"not positive-definite", {of(DType::Float64, {2, 2}, {1, 2, 2, 1})}});
  v.push_back({"negative", {of(DType::Float64, {2, 2}, {-1, 0, 0, -1})}});
  v.push_back({"not square", {make(DType::Float64, {2, 3}, s++)}});
  v.push_back({"0x0", {make(DType::Float64, {0, 0}, s++)}});
  v.push_back({"int", {of(DType::Int64, {1, 1}, {4})}});
  return v;
}

std::vector<Sample> rect_samples(bool allow_empty) {
  std::vector<Sample> v;
  uint64_t s = 3300;
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"3x3 " + n, {make(t, {3, 3}, s++)}});
    v.push_back({"tall 5x3 " + n, {make(t, {5, 3}, s++)}});
    v.push_back({"wide 2x4 " + n, {make(t, {2, 4}, s++)}});
    v.push_back({"batch 2x4x3 " + n, {make(t, {2, 4, 3}, s++)}});
  }
  v.push_back({"transposed", {with_layout(make(DType::Float64, {4, 3}, s++), "transposed")}});
  if (allow_empty) v.push_back({"0x3", {make(DType::Float64, {0, 3}, s++)}});
  v.push_back({"1-d", {make(DType::Float64, {3}, s++)}});
  v.push_back({"int", {make(DType::Int64, {3, 3}, s++)}});
  return v;
}

// U's columns (and Vh's rows) flipped so the largest-magnitude entry of each U column is positive,
// ddl's documented convention. With `invariant`: U diag(S^2) Vh and S, which do not depend on those
// signs (the losses PyTorch's own gradcheck of svd uses), so their gradients compare without it.
const char* kSvdTorch =
    "lambda x, invariant=False: (lambda U, S, Vh: ((U * (S * S).unsqueeze(-2)) @ Vh, S) if invariant else "
    "(lambda s: (U * s, S, Vh * s.transpose(-1, -2)))"
    "(torch.sign(U.gather(-2, U.abs().argmax(-2, keepdim=True)))))(*torch.linalg.svd(x, full_matrices=False))";

// rect_samples, plus sign-invariant losses of well-separated singular values.
std::vector<Sample> svd_samples() {
  std::vector<Sample> v = rect_samples(false);
  uint64_t s = 3400;
  const json inv = {{"invariant", true}};
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"invariant 3x3 " + n, {make(t, {3, 3}, s++)}, inv});
    v.push_back({"invariant tall 5x3 " + n, {make(t, {5, 3}, s++)}, inv});
    v.push_back({"invariant wide 3x5 " + n, {make(t, {3, 5}, s++)}, inv});
    v.push_back({"invariant batch 2x4x3 " + n, {make(t, {2, 4, 3}, s++)}, inv});
  }
  return v;
}

}  // namespace

void add_linalg_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(both("inverse", "lambda x: torch.linalg.inv(x)",
                      [](const auto& in, const json&) { return inverse(in[0]); }, d1, square_samples(true), true,
                      {{"aliases", {"linalg.inv"}}}));
  rows.push_back(both("det", "lambda x: torch.linalg.det(x)", [](const auto& in, const json&) { return det(in[0]); },
                      d1, square_samples(false), true, {{"aliases", {"linalg.det"}}}));
  rows.push_back(both("slogdet", "lambda x: torch.linalg.slogdet(x)",
                      [](const auto& in, const json&) {
                        auto [sg, la] = slogdet(in[0]);
                        return std::vector{sg, la};
                      },
                      d1, square_samples(false), true, {{"aliases", {"linalg.slogdet"}}}));
  rows.push_back(both("solve", "lambda a, b: torch.linalg.solve(a, b)",
                      [](const auto& in, const json&) { return solve(in[0], in[1]); }, {true, true}, solve_samples(),
                      true, {{"aliases", {"linalg.solve"}}}));
  rows.push_back(both("cholesky", "lambda x: torch.linalg.cholesky(x)",
                      [](const auto& in, const json&) { return cholesky(in[0]); }, {true}, cholesky_samples(), true,
                      {{"aliases", {"linalg.cholesky"}}}));
  rows.push_back(both("qr", "lambda x: torch.linalg.qr(x)",
                      [](const auto& in, const json&) {
                        auto [q, r] = qr(in[0]);
                        return std::vector{q, r};
                      },
                      {true}, rect_samples(true), true, {{"aliases", {"linalg.qr"}}}));
  rows.push_back(both("svd", kSvdTorch,
                      [](const auto& in, const json& a) {
                        auto [u, s, vh] = svd(in[0]);
                        if (flag(a, "invariant")) return std::vector{matmul(mul(u, mul(s, s).unsqueeze(-2)), vh), s};
                        return std::vector{u, s, vh};
                      },
                      {true}, svd_samples(), true, {{"aliases", {"linalg.svd"}}}));
}

}  // namespace ddl::sweep
