// batch_norm, layer_norm and group_norm on float32 data with a large mean (the
// reference sweep's inputs: values in [1000, 1001] and [1e4, 1e4 + 1]): the
// float32 result must stay within a few float32 steps of the same op in float64.
// A mean rounded to float32 before subtracting it, or summed in float32, is off by
// a large fraction of the spread there, and every output carries that error.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

// n values in [base, base + 1), spread without a pattern that cancels, as float32.
Tensor large_mean(const Shape& shape, double base) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(base + static_cast<double>((i * 37 + 11) % 101) / 101);
  return from_vector<float>(v, shape);
}

// Largest |a − b| over the elements, a float32 and b float64.
double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = to_vector<double>(a.to(DType::Float64)), y = to_vector<double>(b);
  REQUIRE(x.size() == y.size());
  double m = 0.0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

}  // namespace

TEST_CASE("batch_norm: float32 with a large mean matches float64", "[batch_norm][precision]") {
  for (const Shape& shape : {Shape{4, 3, 2, 2}, Shape{8, 3, 80}, Shape{64, 3}}) {
    INFO("x " << shape);
    const Tensor x = large_mean(shape, 1000.0);
    const BatchNormResult r = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
    const BatchNormResult d = batch_norm(x.to(DType::Float64), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
    // Outputs reach about 1.7: a few float32 steps there are 1e-6; a float32 mean was 1e-4 off.
    CHECK(max_abs_diff(r.y, d.y) < 2e-6);
    CHECK(max_abs_diff(r.save_invstd, d.save_invstd) < 2e-6 * to_vector<double>(d.save_invstd)[0]);
  }
}

TEST_CASE("layer_norm and group_norm: float32 with a large mean matches float64", "[layer_norm][precision]") {
  for (double base : {1e4, 1e6}) {
    INFO("base " << base);
    const Tensor x = large_mean({2, 64}, base);
    const Tensor y = normalize_trailing(Variable(x), 1, 1e-5).data();
    const Tensor yd = normalize_trailing(Variable(x.to(DType::Float64)), 1, 1e-5).data();
    CHECK(max_abs_diff(y, yd) < 2e-6);
    const Tensor l = layer_norm(Variable(x), Shape{64}, Variable(), Variable(), 1e-5).data();
    CHECK(max_abs_diff(l, yd) < 2e-6);
    const Tensor x4 = x.reshape({2, 4, 16});
    const Tensor gn = group_norm(Variable(x4), 2, Variable(), Variable(), 1e-5).data();
    const Tensor gd = group_norm(Variable(x4.to(DType::Float64)), 2, Variable(), Variable(), 1e-5).data();
    CHECK(max_abs_diff(gn, gd) < 2e-6);
  }
}

TEST_CASE("normalize_trailing: gradient in float32 with a large mean matches float64", "[layer_norm][precision]") {
  const Tensor x = large_mean({2, 64}, 1e4);
  std::vector<float> gv(128);
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = static_cast<float>((i * 13 % 7) - 3.0);
  const Tensor g = from_vector<float>(gv, {2, 64});
  Variable a(x, true), b(x.to(DType::Float64), true);
  normalize_trailing(a, 1, 1e-5).backward(g);
  normalize_trailing(b, 1, 1e-5).backward(g.to(DType::Float64));
  // The gradient scales as invstd ≈ 3.5 times the incoming values (up to 3).
  CHECK(max_abs_diff(a.grad(), b.grad()) < 1e-4);
}
