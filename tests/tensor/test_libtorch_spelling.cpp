// LibTorch spellings on ddl::Tensor: sizes(), options(), TensorOptions chains and the
// factories that take them, tensors from literals, operator[] and assignment into a view,
// and indexing with a 0-d integer tensor (a view, as PyTorch's). Each LibTorch form is
// quoted in a comment next to its ddl spelling.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

TEST_CASE("sizes() is indexable, iterable and compares with a vector", "[tensor][spelling]") {
  const Tensor t = zeros({2, 3, 4});
  REQUIRE(t.sizes() == std::vector<int64_t>{2, 3, 4});  // t.sizes() == std::vector<int64_t>{2, 3, 4}
  REQUIRE(t.sizes()[1] == 3);
  REQUIRE(t.sizes().size() == 3);
  int64_t n = 1;
  for (int64_t s : t.sizes()) n *= s;
  REQUIRE(n == 24);
  const IntArrayRef sizes = t.sizes();  // at::IntArrayRef sizes = t.sizes();
  REQUIRE(sizes.vec() == std::vector<int64_t>{2, 3, 4});
  REQUIRE(sizes.front() == 2);
  REQUIRE(sizes.back() == 4);
  REQUIRE(t.strides() == std::vector<int64_t>{12, 4, 1});
  const Variable x(t);
  REQUIRE(x.sizes() == std::vector<int64_t>{2, 3, 4});
}

TEST_CASE("TensorOptions chains as torch::dtype(...).device(...).requires_grad(...)", "[tensor][spelling]") {
  const TensorOptions o = ddl::dtype(kFloat64).device(Device::cpu()).requires_grad(true);
  REQUIRE(o.dtype() == DType::Float64);
  REQUIRE(o.device() == Device::cpu());
  REQUIRE(o.requires_grad());
  REQUIRE(o.has_dtype());
  REQUIRE_FALSE(TensorOptions().has_dtype());
  REQUIRE(ddl::requires_grad().requires_grad());
  REQUIRE_FALSE(ddl::requires_grad(false).requires_grad());
  // A setter returns a copy: the original is unchanged (c10::TensorOptions' semantics).
  const TensorOptions base = ddl::dtype(kInt64);
  const TensorOptions other = base.dtype(kFloat);
  REQUIRE(base.dtype() == DType::Int64);
  REQUIRE(other.dtype() == DType::Float32);
  REQUIRE(kLong == DType::Int64);
  REQUIRE(kDouble == DType::Float64);
  REQUIRE(kInt == DType::Int32);
  REQUIRE(kByte == DType::UInt8);
  REQUIRE(kHalf == DType::Float16);
}

TEST_CASE("options() reports dtype and device; factories take it", "[tensor][spelling]") {
  const Tensor t = ones({2}, kFloat64);
  REQUIRE(t.options().dtype() == DType::Float64);
  REQUIRE(t.options().device() == Device::cpu());
  REQUIRE_FALSE(t.options().requires_grad());
  const Tensor z = zeros({3}, t.options());  // torch::zeros({3}, t.options())
  REQUIRE(z.dtype() == DType::Float64);
  const Variable x(ones({2}), true);
  REQUIRE(x.options().requires_grad());
  REQUIRE(x.options().dtype() == DType::Float32);
  REQUIRE(Variable(ones({2})).options().requires_grad() == false);
}

TEST_CASE("the factories accept options", "[tensor][spelling]") {
  REQUIRE(zeros({2, 2}, ddl::dtype(kInt64)).dtype() ==
          DType::Int64);  // torch::zeros({2, 2}, torch::dtype(torch::kInt64))
  REQUIRE(ones({2}, ddl::dtype(kFloat64)).dtype() == DType::Float64);
  REQUIRE(full({2}, 7, ddl::dtype(kInt32)).dtype() == DType::Int32);
  REQUIRE(empty({2}, ddl::dtype(kUInt8)).dtype() == DType::UInt8);
  REQUIRE(randn({3}, ddl::dtype(kFloat64)).dtype() == DType::Float64);
  REQUIRE(rand({3}, ddl::dtype(kFloat64)).dtype() == DType::Float64);
  REQUIRE(arange(5).dtype() == DType::Int64);
  REQUIRE(arange(5, ddl::dtype(kFloat)).dtype() == DType::Float32);  // torch::arange(5, torch::kFloat)
  REQUIRE(arange(5, ddl::device(Device::cpu())).dtype() == DType::Int64);
  REQUIRE(linspace(0, 1, 3, ddl::dtype(kFloat64)).dtype() == DType::Float64);
  // *_like: what the options leave unset comes from the tensor.
  const Tensor i = arange(4);
  REQUIRE(zeros_like(i, ddl::dtype(kFloat)).dtype() == DType::Float32);
  REQUIRE(ones_like(i, TensorOptions()).dtype() == DType::Int64);
  REQUIRE(full_like(i, 3, ddl::dtype(kFloat64)).dtype() == DType::Float64);
  REQUIRE(empty_like(i, ddl::dtype(kBool)).dtype() == DType::Bool);
  REQUIRE(v(eye(2, 3)) == std::vector<double>{1, 0, 0, 0, 1, 0});  // torch::eye(2, 3)
  REQUIRE(eye(3, kInt64).dtype() == DType::Int64);
  REQUIRE(eye(0).numel() == 0);
  REQUIRE_THROWS_WITH(eye(-1), Catch::Contains("eye: n must be greater or equal to 0"));
}

TEST_CASE("a Tensor factory refuses requires_grad; ddl::autograd's returns a Variable", "[tensor][spelling]") {
  // at::zeros refuses TensorOptions with requires_grad set; torch::zeros gives a leaf that requires grad.
  REQUIRE_THROWS_WITH(zeros({2}, ddl::requires_grad()), Catch::Contains("zeros: a Tensor cannot require grad") &&
                                                            Catch::Contains("ddl::autograd::zeros"));
  REQUIRE_THROWS_WITH(randn({2}, ddl::requires_grad()), Catch::Contains("randn: a Tensor cannot require grad"));
  REQUIRE_THROWS_WITH(arange(0.0, 2.0, 1.0, ddl::requires_grad()), Catch::Contains("arange:"));
  REQUIRE_THROWS_WITH(ddl::tensor({1.0}, ddl::requires_grad()), Catch::Contains("tensor:"));

  Variable x = autograd::ones({3}, ddl::requires_grad());  // auto x = torch::ones({3}, torch::requires_grad());
  REQUIRE(x.requires_grad());
  REQUIRE(x.is_leaf());
  (x * x).sum().backward();
  REQUIRE(v(x.grad()) == std::vector<double>{2, 2, 2});
  Variable w = autograd::randn({2, 2}, ddl::dtype(kFloat64).requires_grad(true));
  REQUIRE(w.dtype() == DType::Float64);
  REQUIRE(w.requires_grad());
  REQUIRE_FALSE(autograd::zeros({2}).requires_grad());
  REQUIRE(autograd::zeros_like(w).dtype() == DType::Float64);
  REQUIRE_FALSE(autograd::zeros_like(w).requires_grad());  // as torch::zeros_like: only when asked
  REQUIRE(autograd::zeros_like(w, w.options()).requires_grad());
  Variable l = autograd::tensor({{1.0, 2.0}, {3.0, 4.0}}, ddl::requires_grad());
  REQUIRE(l.requires_grad());
  REQUIRE(l.sizes() == std::vector<int64_t>{2, 2});
  REQUIRE(autograd::eye(2, ddl::requires_grad()).requires_grad());
  REQUIRE_THROWS_WITH(autograd::arange(3, ddl::requires_grad()),
                      Catch::Contains("arange: only tensors of floating point dtype can require gradients"));
}

TEST_CASE("tensor() from literals takes the dtype of the elements", "[tensor][spelling]") {
  const Tensor a = ddl::tensor({{1, 2}, {3, 4}});  // torch::tensor({{1, 2}, {3, 4}})
  REQUIRE(a.dtype() == DType::Int64);
  REQUIRE(a.sizes() == std::vector<int64_t>{2, 2});
  REQUIRE(v(a) == std::vector<double>{1, 2, 3, 4});
  REQUIRE(ddl::tensor({1.5, 2.5}).dtype() == DType::Float32);
  REQUIRE(ddl::tensor({1.5f}).dtype() == DType::Float32);
  REQUIRE(ddl::tensor({true, false}).dtype() == DType::Bool);
  REQUIRE(v(ddl::tensor({true, false})) == std::vector<double>{1, 0});
  REQUIRE(ddl::tensor(3).dim() == 0);  // torch::tensor(3) is 0-d
  REQUIRE(ddl::tensor(3).item<int64_t>() == 3);
  REQUIRE(ddl::tensor({3}).sizes() == std::vector<int64_t>{1});
  REQUIRE(ddl::tensor({}).sizes() == std::vector<int64_t>{0});
  REQUIRE(ddl::tensor({{{1.0}, {2.0}}}).sizes() == std::vector<int64_t>{1, 2, 1});
  const Tensor d = ddl::tensor({1, 2}, ddl::dtype(kFloat64));  // torch::tensor({1, 2}, torch::kFloat64)
  REQUIRE(d.dtype() == DType::Float64);
  REQUIRE(ddl::tensor({0.1}, kFloat64).item() == 0.1);  // converted from the exact double, not via float32
  REQUIRE(ddl::tensor(std::vector<float>{1, 2, 3}).sizes() == std::vector<int64_t>{3});
  REQUIRE(ddl::tensor(int64_t{1} << 60).item<int64_t>() == int64_t{1} << 60);  // no round trip through double
  REQUIRE(ddl::tensor(std::vector<uint8_t>{1, 255}).dtype() == DType::UInt8);
}

TEST_CASE("tensor() refuses ragged and mixed lists, naming the op", "[tensor][spelling]") {
  REQUIRE_THROWS_WITH(ddl::tensor({{1, 2}, {3}}),
                      Catch::StartsWith("tensor: expected all sub-lists at depth 1 to have 2 elements"));
  REQUIRE_THROWS_WITH(ddl::tensor({{1, 2}, 3}), Catch::StartsWith("tensor: expected a list of 2 elements at depth 1"));
  REQUIRE_THROWS_WITH(ddl::tensor({1, {2, 3}}), Catch::StartsWith("tensor: expected a number at depth 1"));
  REQUIRE_THROWS_WITH(ddl::tensor({1, 2.5}), Catch::StartsWith("tensor: expected all elements to be of one type"));
}

TEST_CASE("t[i] selects a view; t[i][j] = value writes into t", "[tensor][spelling]") {
  const Tensor t = arange(0.0, 6.0).view({2, 3});
  REQUIRE(v(t[1]) == std::vector<double>{3, 4, 5});  // t[1]
  REQUIRE(t[1].shares_storage(t));
  REQUIRE(t[1][2].item() == 5);
  REQUIRE(t[-1][0].item() == 3);
  t[0][1] = 5;  // t[0][1] = 5;
  REQUIRE(v(t) == std::vector<double>{0, 5, 2, 3, 4, 5});
  t[1] = ddl::tensor({7.0, 8.0, 9.0});  // t[1] = torch::tensor({7., 8., 9.});
  REQUIRE(v(t) == std::vector<double>{0, 5, 2, 7, 8, 9});
  t[1] = 1.5;  // broadcast scalar
  REQUIRE(v(t[1]) == std::vector<double>{1.5, 1.5, 1.5});
  // A named tensor is rebound by assignment, never written into.
  Tensor u = t[0];
  u = zeros({4});
  REQUIRE(u.numel() == 4);
  REQUIRE(v(t[0]) == std::vector<double>{0, 5, 2});
  // An index tensor indexes dim 0 (a copy for int64 and bool tensors, as LibTorch's t[idx]).
  REQUIRE(v(t[ddl::tensor({1, 0})]) == std::vector<double>{1.5, 1.5, 1.5, 0, 5, 2});
  REQUIRE(v(t[ddl::tensor({false, true})]) == std::vector<double>{1.5, 1.5, 1.5});
  REQUIRE_THROWS_WITH(t[2], Catch::Contains("select"));
}

TEST_CASE("indexing with a 0-d integer tensor gives a view, as PyTorch's", "[tensor][spelling][indexing]") {
  // Python: x[torch.tensor(1)] shares x's storage (it is read as the integer 1).
  const Tensor x = arange(0.0, 6.0).view({2, 3});
  const Tensor i = scalar_tensor(1, kInt64);
  const Tensor r = x.index({i});
  REQUIRE(r.sizes() == std::vector<int64_t>{3});
  REQUIRE(r.shares_storage(x));
  REQUIRE(x[i].shares_storage(x));
  REQUIRE(x.index({Slice(), scalar_tensor(-1, kInt32)}).shares_storage(x));
  REQUIRE(v(x.index({Slice(), scalar_tensor(-1, kInt32)})) == std::vector<double>{2, 5});
  x[i] = 0.0;  // writes through the view
  REQUIRE(v(x) == std::vector<double>{0, 1, 2, 0, 0, 0});
  index_put_(x, {scalar_tensor(0, kInt64), 2}, ones({}));
  REQUIRE(x[0][2].item() == 1);
  REQUIRE_THROWS_WITH(x.index({scalar_tensor(2, kInt64)}), Catch::Contains("index: index 2 is out of range"));
  // A 1-element 1-d index tensor still gathers a copy.
  REQUIRE_FALSE(x.index({ddl::tensor({1})}).shares_storage(x));
}
