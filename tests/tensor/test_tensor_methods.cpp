// Method forms on Tensor and Variable (x.sum(), x.sort(), x.eq(y), ...), the
// non-differentiable ops and comparison operators on Variables, item<T>(), and
// draws from the default generator (manual_seed repeats them, threads never
// share counters).
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::random_double;

namespace {
bool same(const Tensor& a, const Tensor& b) { return a.shape() == b.shape() && allclose(a, b, 0, 0); }
}  // namespace

TEST_CASE("Tensor methods equal the free functions", "[methods]") {
  const Tensor x = random_double({3, 4}, 1), y = random_double({4, 2}, 2);
  const Tensor p = add(abs(x), 0.5);  // positive, for log and sqrt
  REQUIRE(same(x.sum(), sum(x)));
  REQUIRE(same(x.sum({1}, true), sum(x, {1}, true)));
  REQUIRE(same(x.mean({0}), mean(x, {0})));
  REQUIRE(same(x.max(), amax(x)));
  REQUIRE(same(x.min(), amin(x)));
  REQUIRE(same(x.max(1).values, amax(x, {1})));
  REQUIRE(same(x.max(1).indices, argmax(x, 1)));
  REQUIRE(same(x.min(0, true).indices, argmin(x, 0, true)));
  REQUIRE(same(x.argmax(1), argmax(x, 1)));
  REQUIRE(same(x.argmin(1, true), argmin(x, 1, true)));
  REQUIRE(same(x.abs(), abs(x)));
  REQUIRE(same(x.neg(), neg(x)));
  REQUIRE(same(x.exp(), exp(x)));
  REQUIRE(same(p.log(), log(p)));
  REQUIRE(same(p.sqrt(), sqrt(p)));
  REQUIRE(same(x.pow(3), pow(x, 3)));
  REQUIRE(same(x.relu(), relu(x)));
  REQUIRE(same(x.sigmoid(), sigmoid(x)));
  REQUIRE(same(x.tanh(), tanh(x)));
  REQUIRE(same(x.clamp(-0.5, 0.5), clamp(x, -0.5, 0.5)));
  REQUIRE(same(x.matmul(y), matmul(x, y)));
  REQUIRE(same(x.softmax(1), softmax(x, 1)));
  REQUIRE(same(x.log_softmax(0), log_softmax(x, 0)));
  REQUIRE(same(x.cumsum(1), cumsum(x, 1)));
  REQUIRE(same(x.sort(1, true).values, sort(x, 1, true).values));
  REQUIRE(same(x.argsort(0), argsort(x, 0)));
  REQUIRE(same(x.topk(2).indices, topk(x, 2).indices));
  REQUIRE(same(x.eq(x), eq(x, x)));
  REQUIRE(same(x.lt(0.0), lt(x, 0.0)));
  REQUIRE(same(x.ge(y.t().narrow(0, 0, 1)), ge(x, y.t().narrow(0, 0, 1))));  // broadcast [1, 4]
  REQUIRE(same(x.to(DType::Float32), x.to(DType::Float32)));
}

TEST_CASE("argmax() and argmin() without a dim index the flattened tensor", "[methods]") {
  const Tensor x = from_vector<double>({1, 7, 3, -2, 5, 0}, {2, 3});
  REQUIRE(x.argmax().item<int64_t>() == 1);
  REQUIRE(x.argmin().item<int64_t>() == 3);
  REQUIRE(x.t().argmax().item<int64_t>() == 2);  // transposed: 7 is the third element
  Variable v(x);
  REQUIRE(v.argmax().item<int64_t>() == 1);
  REQUIRE(v.argmin().dim() == 0);
}

TEST_CASE("Variable methods are differentiable like the free functions", "[methods][grad]") {
  using V = std::vector<Variable>;
  const Tensor a = random_double({3, 4}, 3), b = random_double({4, 2}, 4);
  REQUIRE_GRADCHECK([](const V& x) { return x[0].sum({1}); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].mean(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].max(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].min(1).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].abs().exp(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return (x[0].pow(2) + 0.5).sqrt().log(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].neg().relu() + x[0].sigmoid() * x[0].tanh(); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].clamp(-0.4, std::nullopt); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].matmul(x[1]).softmax(1); }, {a, b});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].log_softmax(0).cumsum(1); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].sort(0).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].topk(2, 1, false).values; }, {a});
  // Same values as the free functions.
  const Variable v(a);
  REQUIRE(same(v.sum({0}, true).data(), sum(a, {0}, true)));
  REQUIRE(same(v.matmul(Variable(b)).data(), matmul(a, b)));
  REQUIRE(same(v.max(1).indices, argmax(a, 1)));
  REQUIRE(same(v.argsort(1), argsort(a, 1)));
  REQUIRE(same(v.to(DType::Float32).data(), a.to(DType::Float32)));
}

TEST_CASE("Variables compare without .data(): functions, methods and operators", "[methods][compare]") {
  const Variable x(from_vector<double>({1, 2, 3}), true), y(from_vector<double>({3, 2, 1}));
  auto bools = [](const Tensor& t) {
    REQUIRE(t.dtype() == DType::Bool);
    return to_vector<int64_t>(t);
  };
  using I = std::vector<int64_t>;
  REQUIRE(bools(eq(x, y)) == I{0, 1, 0});
  REQUIRE(bools(x.ne(y)) == I{1, 0, 1});
  REQUIRE(bools(x == y) == I{0, 1, 0});
  REQUIRE(bools(x != y) == I{1, 0, 1});
  REQUIRE(bools(x < y) == I{1, 0, 0});
  REQUIRE(bools(x <= y) == I{1, 1, 0});
  REQUIRE(bools(x > y) == I{0, 0, 1});
  REQUIRE(bools(x >= y) == I{0, 1, 1});
  REQUIRE(bools(x > 1.5) == I{0, 1, 1});
  REQUIRE(bools(x == 2.0) == I{0, 1, 0});
  REQUIRE(bools(1.5 < x) == I{0, 1, 1});  // a scalar on the left mirrors the comparison
  REQUIRE(bools(2.0 >= x) == I{1, 1, 0});
  REQUIRE(bools(lt(x, 2.0)) == I{1, 0, 0});
  REQUIRE(bools(x.le(2.0)) == I{1, 1, 0});
  // A Tensor operand converts: a Variable compared with a plain tensor.
  REQUIRE(bools(x == from_vector<double>({1, 0, 3})) == I{1, 0, 1});
  REQUIRE(to_vector<int64_t>(argmax(Variable(from_vector<double>({0, 5, 1, 9, 2, 3}, {2, 3})), 1)) == I{1, 0});
  REQUIRE(to_vector<int64_t>(argmin(Variable(from_vector<double>({0, 5, 1, 9, 2, 3}, {2, 3})), 0, true)) == I{0, 1, 0});
  // Their results carry no gradient and leave x's graph alone.
  const Tensor mask = x > 1.5;
  REQUIRE(!Variable(mask).requires_grad());
}

TEST_CASE("item<T>() on Variables converts the single value", "[methods]") {
  const Variable v(scalar_tensor(3.75), true);
  REQUIRE(v.item() == 3.75);
  REQUIRE(v.item<float>() == 3.75f);
  REQUIRE(v.item<int64_t>() == 3);
  REQUIRE(Variable(from_vector<int64_t>({42})).item<int64_t>() == 42);
  REQUIRE_THROWS(Variable(zeros({2})).item<double>());
}

TEST_CASE("manual_seed makes default-generator draws repeatable", "[random]") {
  manual_seed(123);
  const Tensor a = rand({4, 5}), b = randn({7}, DType::Float64), c = randint(0, 10, {6}), d = randperm(8);
  const Tensor e = rand_like(a), f = randn_like(b);
  manual_seed(123);
  REQUIRE(same(rand({4, 5}), a));
  REQUIRE(same(randn({7}, DType::Float64), b));
  REQUIRE(same(randint(0, 10, {6}), c));
  REQUIRE(same(randperm(8), d));
  REQUIRE(same(rand_like(a), e));
  REQUIRE(same(randn_like(b), f));
  // Draws advance the stream: the next draw differs; another seed differs.
  REQUIRE(!same(rand({4, 5}), a));
  manual_seed(124);
  REQUIRE(!same(rand({4, 5}), a));
  // The same as an explicit generator of that seed, draw for draw.
  manual_seed(5);
  Generator g(5);
  REQUIRE(same(randn({3, 3}), randn({3, 3}, g)));
  REQUIRE(same(rand_like(a), rand_like(a, g)));
  REQUIRE(rand_like(a).dtype() == a.dtype());
  REQUIRE(randint(3, 4, {5}).max().item() == 3);
}

TEST_CASE("the default generator gives threads disjoint counters", "[random]") {
  // Each 1-element draw takes one Philox counter: 4 threads x 500 draws from one
  // seed must use 2000 distinct counters, so (with 53 random bits) 2000 distinct values.
  manual_seed(77);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&got, t] {
      for (int i = 0; i < 500; ++i) got[t].push_back(rand({1}, DType::Float64).item());
    });
  for (auto& th : threads) th.join();
  std::set<double> all;
  for (const auto& v : got) all.insert(v.begin(), v.end());
  REQUIRE(all.size() == 2000);
  REQUIRE(default_generator().offset() == 2000);
  // And they are exactly the first 2000 values of the stream.
  manual_seed(77);
  const std::vector<double> stream = to_vector<double>(rand({2000}, DType::Float64));
  REQUIRE(std::set<double>(stream.begin(), stream.end()) == all);
}

TEST_CASE("x.sum(1) and x.mean(1) take one dim as LibTorch; x.sum({}) still sums everything", "[methods]") {
  const Tensor x = arange(0, 6, 1, DType::Float64).reshape({2, 3});
  REQUIRE(to_vector<double>(x.sum(1)) == std::vector<double>{3, 12});
  REQUIRE(to_vector<double>(x.mean(0)) == std::vector<double>{1.5, 2.5, 3.5});
  REQUIRE(x.sum(1, true).shape() == Shape{2, 1});
  REQUIRE(x.sum(-1L).shape() == Shape{2});
  REQUIRE(x.sum({}).item() == 15);
  REQUIRE(x.sum({1}).shape() == Shape{2});
  const Variable v(x, true);
  v.sum(1).sum().backward();
  REQUIRE(to_vector<double>(v.grad()) == std::vector<double>(6, 1.0));
  REQUIRE(v.mean(0).shape() == Shape{3});
  REQUIRE(v.sum({}).item() == 15);
}
