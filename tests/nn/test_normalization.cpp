// LayerNorm, GroupNorm and Embedding: PyTorch golden values (outputs, input and
// parameter gradients), finite-difference gradient checks, padding_idx, errors.
#include <catch2/catch.hpp>

#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include "tests/nn/sequence_golden.h"
#include "tests/nn/sequence_layers_golden.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
using ddl::test::leaf;
using ddl::test::random_double;

TEST_CASE("LayerNorm and GroupNorm match PyTorch", "[nn][norm][golden]") {
  SECTION("LayerNorm([3, 4])") {
    LayerNorm m(Shape{3, 4});
    test::set_golden_params(m);
    const Variable x = leaf({2, 3, 4}, 0.7, 0.3, 2.0);
    test::check_golden_case(&m, {x}, {m(x)}, layer_norm_outputs, layer_norm_input_grads, layer_norm_param_names,
                            layer_norm_param_grads);
  }
  SECTION("GroupNorm(2, 6)") {
    GroupNorm m(2, 6);
    test::set_golden_params(m);
    const Variable x = leaf({2, 6, 3, 2}, 0.7, 0.3, 2.0);
    test::check_golden_case(&m, {x}, {m(x)}, group_norm_outputs, group_norm_input_grads, group_norm_param_names,
                            group_norm_param_grads);
  }
}

TEST_CASE("layer_norm and group_norm pass gradient checks", "[nn][norm][gradcheck]") {
  const Tensor x = random_double({3, 2, 5}, 1, -2, 2), w = random_double({2, 5}, 2), b = random_double({2, 5}, 3);
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return layer_norm(v[0], Shape{2, 5}, v[1], v[2]);
      },
      {x, w, b});
  // Non-contiguous input, one normalised dim, no affine.
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return layer_norm(v[0], Shape{5}, Variable(), Variable()); },
                    {test::non_contiguous(x)});
  const Tensor xg = random_double({2, 6, 3}, 4, -2, 2), wg = random_double({6}, 5), bg = random_double({6}, 6);
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return group_norm(v[0], 3, v[1], v[2]); }, {xg, wg, bg});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return group_norm(v[0], 1, Variable(), Variable()); },
                    {random_double({2, 4}, 7, -2, 2)});
}

TEST_CASE("LayerNorm normalises each row and behaves the same in eval", "[nn][norm]") {
  LayerNorm m(Shape{8});
  const Tensor x = add(mul(random_double({4, 8}, 11), 5.0), 3.0).to(DType::Float32);
  const Variable y = m(x);
  const Tensor mu = mean(y.data(), {1}), v = var(y.data(), {1}, 0);
  for (double e : to_vector<double>(mu)) REQUIRE(e == Approx(0).margin(1e-5));
  for (double e : to_vector<double>(v)) REQUIRE(e == Approx(1).epsilon(1e-3));
  m.eval();
  REQUIRE(allclose(m(x).data(), y.data()));
  REQUIRE(m.weight.shape() == Shape{8});
  std::ostringstream os;
  os << m;
  REQUIRE(os.str() == "LayerNorm((8,), eps=1e-05, elementwise_affine=True)");
  REQUIRE(LayerNorm(Shape{4}, 1e-5, false).parameters().empty());
}

TEST_CASE("Normalization errors name the layer and the shapes", "[nn][norm]") {
  LayerNorm ln(Shape{4});
  REQUIRE_THROWS_WITH(ln(Variable(zeros({2, 5}))), Catch::Contains("layer_norm") && Catch::Contains("[2, 5]"));
  REQUIRE_THROWS_WITH(GroupNorm(4, 6), Catch::Contains("GroupNorm") && Catch::Contains("divide"));
  GroupNorm gn(2, 4);
  REQUIRE_THROWS_WITH(gn(Variable(zeros({2, 6, 3}))), Catch::Contains("GroupNorm") && Catch::Contains("[2, 6, 3]"));
}

TEST_CASE("Embedding matches PyTorch, padding_idx gets no gradient", "[nn][embedding][golden]") {
  Embedding m(7, 4, 2);
  test::set_golden_params(m);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < 8; ++i) idx.push_back((3 * i + 1) % 7);
  const Tensor indices = from_vector(idx, {2, 4});
  test::check_golden_case(&m, {}, {m.forward(indices)}, embedding_outputs, {}, embedding_param_names,
                          embedding_param_grads);
  // Indices 1 4 0 3 / 6 2 5 1: row 2 (padding) is looked up yet gets no gradient; row 1 gets two.
  const Tensor g = m.weight.grad();
  for (int64_t j = 0; j < 4; ++j) REQUIRE(g.select(0, 2).select(0, j).item() == 0.0);
  REQUIRE(sum(abs(g.select(0, 1))).item() > 0.0);
}

TEST_CASE("embedding passes a gradient check with repeated indices", "[nn][embedding][gradcheck]") {
  const Tensor indices = from_vector(std::vector<int64_t>{0, 3, 3, 1, 0, 4}, {3, 2});
  REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return embedding(indices, v[0]); },
                    {random_double({5, 3}, 21)});
  // Twice: through embedding(w) * embedding(w), whose first gradient depends on w.
  for (std::optional<int64_t> padding : {std::optional<int64_t>(), std::optional<int64_t>(3)}) {
    auto square = [&](const std::vector<Variable>& v) {
      const Variable e = embedding(indices, v[0], padding);
      return mul(e, e);
    };
    REQUIRE_GRADCHECK(test::first_grad(square, 0), {random_double({5, 3}, 25)});
    auto square_one_hot = [&](const std::vector<Variable>& v) {
      const Variable e = ddl::detail::embedding_one_hot(indices, v[0], padding);
      return mul(e, e);
    };
    REQUIRE_GRADCHECK(test::first_grad(square_one_hot, 0), {random_double({5, 3}, 26)});
  }
  // (With padding_idx the padding row is read but gets no gradient, by definition, so
  // finite differences disagree there; the golden case above covers it.)
}

TEST_CASE("Embedding initialises N(0, 1) with a zero padding row, and checks indices", "[nn][embedding]") {
  manual_seed(5);
  Embedding m(1000, 16, -1);
  const Tensor w = m.weight.data();
  REQUIRE(std::abs(mean(w).item()) < 0.01);
  REQUIRE(var(w).item() == Approx(1.0).epsilon(0.03));
  REQUIRE(sum(abs(w.select(0, 999))).item() == 0.0);
  REQUIRE(m.forward(from_vector(std::vector<int64_t>{5}, {1})).shape() == Shape({1, 16}));
  REQUIRE(m.forward(scalar_tensor(7, DType::Int64)).shape() == Shape({16}));
  REQUIRE_THROWS_WITH(m.forward(from_vector(std::vector<int64_t>{1000}, {1})),
                      Catch::Contains("embedding") && Catch::Contains("1000"));
  REQUIRE_THROWS_WITH(m.forward(zeros({2}, DType::Float32)), Catch::Contains("int64"));
  std::ostringstream os;
  os << m;
  REQUIRE(os.str() == "Embedding(1000, 16, padding_idx=999)");
}

TEST_CASE("The one-hot embedding path of other devices equals the CPU gather", "[nn][embedding]") {
  const Tensor indices = from_vector(std::vector<int64_t>{4, 0, 2, 2, 1, 4}, {2, 3});
  for (std::optional<int64_t> padding : {std::optional<int64_t>(), std::optional<int64_t>(2)}) {
    const Variable w1(random_double({5, 3}, 23), true), w2(w1.data().clone(), true);
    const Variable y1 = embedding(indices, w1, padding), y2 = ddl::detail::embedding_one_hot(indices, w2, padding);
    REQUIRE(y2.shape() == Shape({2, 3, 3}));
    REQUIRE(allclose(y1.data(), y2.data(), 0, 0));
    const Tensor g = random_double({2, 3, 3}, 24);
    y1.backward(g);
    y2.backward(g);
    REQUIRE(allclose(w1.grad(), w2.grad(), 1e-15, 1e-15));
  }
  REQUIRE_THROWS_WITH(ddl::detail::embedding_one_hot(from_vector(std::vector<int64_t>{5}), Variable(zeros({5, 2})), {}),
                      Catch::Contains("out of range"));
}
