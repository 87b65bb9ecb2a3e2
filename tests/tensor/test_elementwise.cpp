// Elementwise ops: known values, broadcasting, dtypes, in-place forms, errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

namespace {
Tensor d(std::vector<double> x) { return from_vector<double>(x); }
}  // namespace

TEST_CASE("arithmetic with broadcasting", "[elementwise]") {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = from_vector<float>({10, 20, 30}, {3});
  Tensor col = from_vector<float>({100, 200}, {2, 1});
  REQUIRE(v(a + row) == std::vector<double>{11, 22, 33, 14, 25, 36});
  REQUIRE(v(a - col) == std::vector<double>{-99, -98, -97, -196, -195, -194});
  REQUIRE(v(row * col) == std::vector<double>{1000, 2000, 3000, 2000, 4000, 6000});
  REQUIRE(v(a / 2.0) == std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3});
  REQUIRE(v(add(a, row, 0.5)) == std::vector<double>{6, 12, 18, 9, 15, 21});
  REQUIRE(v(10.0 - a)[0] == 9);
  REQUIRE(v(maximum(a, from_vector<float>({3}, {1}))) == std::vector<double>{3, 3, 3, 4, 5, 6});
  REQUIRE(v(minimum(a, row)) == std::vector<double>{1, 2, 3, 4, 5, 6});
  REQUIRE_THROWS_WITH(add(a, from_vector<float>({1, 2}, {2})),
                      Catch::Contains("add: shapes [2, 3] and [2] cannot be broadcast together"));
}

TEST_CASE("unary math matches the C library", "[elementwise]") {
  const std::vector<double> x = {-2.0, -0.5, 0.25, 1.0, 3.0};
  const Tensor t = d(x);
  const auto e = v(exp(t)), th = v(tanh(t)), sg = v(sigmoid(t)), r = v(relu(t)), ab = v(abs(t)), ng = v(neg(t));
  for (size_t i = 0; i < x.size(); ++i) {
    REQUIRE(e[i] == Approx(std::exp(x[i])));
    REQUIRE(th[i] == Approx(std::tanh(x[i])));
    REQUIRE(sg[i] == Approx(1 / (1 + std::exp(-x[i]))));
    REQUIRE(r[i] == std::max(0.0, x[i]));
    REQUIRE(ab[i] == std::abs(x[i]));
    REQUIRE(ng[i] == -x[i]);
  }
  const Tensor p = d({0.25, 1.0, 4.0});
  REQUIRE(v(log(p)) == std::vector<double>{std::log(0.25), 0.0, std::log(4.0)});
  REQUIRE(v(sqrt(p)) == std::vector<double>{0.5, 1, 2});
  REQUIRE(v(rsqrt(p)) == std::vector<double>{2, 1, 0.5});
  REQUIRE(v(pow(p, 2)) == std::vector<double>{0.0625, 1, 16});
  REQUIRE(v(pow(p, 0.5)) == std::vector<double>{0.5, 1, 2});
  REQUIRE(v(clamp(t, -1, 1)) == std::vector<double>{-1, -0.5, 0.25, 1, 1});
  REQUIRE(v(clamp(t, 1, -1)) == std::vector<double>(5, -1.0));  // lo > hi gives hi, as torch.clamp
  REQUIRE(exp(from_vector<int64_t>({0})).dtype() == DType::Float32);
}

TEST_CASE("comparisons return bool and feed where", "[elementwise]") {
  Tensor a = from_vector<float>({1, 5, 3});
  Tensor b = from_vector<float>({2, 5, 1});
  REQUIRE(gt(a, b).dtype() == DType::Bool);
  REQUIRE(to_vector<uint8_t>(gt(a, b)) == std::vector<uint8_t>{0, 0, 1});
  REQUIRE(to_vector<uint8_t>(eq(a, b)) == std::vector<uint8_t>{0, 1, 0});
  REQUIRE(to_vector<uint8_t>(le(a, 3.0)) == std::vector<uint8_t>{1, 0, 1});
  REQUIRE(to_vector<uint8_t>(ne(a, b)) == std::vector<uint8_t>{1, 0, 1});
  REQUIRE(to_vector<uint8_t>(lt(a, b)) == std::vector<uint8_t>{1, 0, 0});
  REQUIRE(to_vector<uint8_t>(ge(a, b)) == std::vector<uint8_t>{0, 1, 1});
  REQUIRE(v(where(gt(a, b), a, b)) == std::vector<double>{2, 5, 3});
  REQUIRE(v(where(gt(a, 2.0), a, zeros({1}))) == std::vector<double>{0, 5, 3});
  // Bools compare (as uint8 underneath); add and mul of two give a bool, sub is refused (as PyTorch).
  const Tensor p = gt(a, b), q = ge(a, b);
  REQUIRE(to_vector<uint8_t>(eq(p, q)) == std::vector<uint8_t>{1, 0, 1});
  REQUIRE(to_vector<uint8_t>(lt(p, q)) == std::vector<uint8_t>{0, 1, 0});
  REQUIRE(to_vector<uint8_t>(add(p, q)) == std::vector<uint8_t>{0, 1, 1});
  REQUIRE(to_vector<uint8_t>(mul(p, q)) == std::vector<uint8_t>{0, 0, 1});
  REQUIRE_THROWS_WITH(sub(p, q), Catch::Contains("sub: subtraction with a bool tensor"));
}

TEST_CASE("in-place ops write into the tensor, broadcasting the other operand", "[elementwise]") {
  Tensor a = ones({2, 3});
  const void* p = a.raw_data();
  a.add_(from_vector<float>({1, 2, 3}));
  a.mul_(2.0);
  a.sub_(ones({1}));
  REQUIRE(a.raw_data() == p);
  REQUIRE(v(a) == std::vector<double>{3, 5, 7, 3, 5, 7});
  a.div_(from_vector<float>({1, 5, 7}));
  REQUIRE(v(a) == std::vector<double>{3, 1, 1, 3, 1, 1});
  a.clamp_(0, 2);
  REQUIRE(v(a)[0] == 2);
  REQUIRE_THROWS_WITH(ones({3}).add_(ones({2, 3})), Catch::Contains("does not fit"));
}

TEST_CASE("integer arithmetic stays integral; division gives floats", "[elementwise]") {
  Tensor i = from_vector<int64_t>({7, -3});
  REQUIRE((i + i).dtype() == DType::Int64);
  REQUIRE(to_vector<int64_t>(i * 3.0) == std::vector<int64_t>{21, -9});
  REQUIRE(div(i, from_vector<int64_t>({2, 2})).dtype() == DType::Float32);
  REQUIRE(v(div(i, from_vector<int64_t>({2, 2}))) == std::vector<double>{3.5, -1.5});
}

TEST_CASE("large elementwise ops agree between 1 and 2 threads", "[elementwise][threads]") {
  Generator g(5);
  Tensor a = randn({257, 1031}, g), b = randn({1031}, g);
  const int n = get_num_threads();
  set_num_threads(1);
  const auto one = to_vector<float>(tanh(add(a.t().contiguous().t(), b)));
  set_num_threads(2);
  const auto two = to_vector<float>(tanh(add(a, b)));
  set_num_threads(n);
  REQUIRE(one == two);
}

TEST_CASE("allclose handles tolerance and NaN", "[elementwise]") {
  REQUIRE(allclose(d({1, 2}), d({1 + 1e-9, 2})));
  REQUIRE_FALSE(allclose(d({1, 2}), d({1.1, 2})));
  REQUIRE_FALSE(allclose(d({NAN}), d({NAN})));
  REQUIRE(allclose(d({1}), d({1, 1})));  // broadcasts, as torch.allclose
  REQUIRE_THROWS_WITH(allclose(d({1, 1}), d({1, 1, 1})), Catch::Contains("allclose: shapes"));
}

TEST_CASE("an in-place op reads an overlapping operand as it was before the op", "[elementwise][inplace]") {
  for (DType t : {DType::Float32, DType::BFloat16}) {
    INFO(t);
    const Tensor x0 = arange(0, 16, 1, DType::Float32).reshape({4, 4}).to(t);
    Tensor x = x0.clone();
    x.add_(x.t());  // the transpose's elements are written before some are read
    REQUIRE(to_vector<float>(x.to(DType::Float32)) == to_vector<float>(add(x0, x0.t()).to(DType::Float32)));
    x = x0.clone();
    x.mul_(x.narrow(0, 1, 1));  // row 1 broadcast over rows 0..3, row 1 among them
    REQUIRE(to_vector<float>(x.to(DType::Float32)) == to_vector<float>(mul(x0, x0.narrow(0, 1, 1)).to(DType::Float32)));
    x = x0.clone();
    x.add_(x);  // the same view: element for element, no copy needed
    REQUIRE(to_vector<float>(x.to(DType::Float32)) == to_vector<float>(mul(x0, 2.0).to(DType::Float32)));
    x = x0.clone();
    x.narrow(0, 0, 2).sub_(x.narrow(0, 2, 2));  // one storage, no overlap
    REQUIRE(to_vector<float>(x.narrow(0, 0, 2).to(DType::Float32)) ==
            to_vector<float>(sub(x0.narrow(0, 0, 2), x0.narrow(0, 2, 2)).to(DType::Float32)));
  }
}
