// Silent differences a LibTorch port would hit: clone() must keep a child module's own
// configuration (LibTorch's Cloneable clones each child), and nn::functional called with
// plain Tensors must behave as with Variables (torch::Tensor is one type).
#include <catch2/catch.hpp>
#include <type_traits>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

namespace {

// A child whose configuration (scale) is set after construction, not by the parent's reset().
class Scaled : public Cloneable<Scaled> {
 public:
  Scaled() : Cloneable("Scaled") { reset(); }
  void reset() override { w = register_parameter("w", ones({2})); }
  Variable forward(const Variable& x) override { return x * w * scale; }
  double scale = 1.0;
  Variable w;
};

class Outer : public Cloneable<Outer> {
 public:
  Outer() : Cloneable("Outer") { reset(); }
  void reset() override { inner = register_module("inner", std::make_shared<Scaled>()); }
  Variable forward(const Variable& x) override { return inner->forward(x); }
  std::shared_ptr<Scaled> inner;
};

}  // namespace

TEST_CASE("clone keeps a child's configuration, in new storage", "[nn][clone][porting]") {
  Outer outer;
  outer.inner->scale = 3.0;
  outer.inner->w.data().fill_(2.0);
  auto copy = clone(outer);
  REQUIRE(copy->inner != outer.inner);
  REQUIRE(copy->inner->scale == 3.0);
  REQUIRE(to_vector<float>(copy->forward(Variable(ones({2}))).data()) == std::vector<float>{6, 6});
  // The member handle and the registered child are one object, and its storage is its own.
  REQUIRE(copy->named_children()[0].second.get() == copy->inner.get());
  copy->inner->w.data().fill_(5.0);
  REQUIRE(to_vector<float>(outer.inner->w.data()) == std::vector<float>{2, 2});
}

TEST_CASE("nn::functional with plain Tensors behaves as with Variables", "[nn][functional][porting]") {
  namespace F = nn::functional;
  const Tensor x = from_vector<float>({1.0f, 2.0f, 0.5f, 0.1f, -1.0f, 2.0f}, {2, 3});
  // Probability targets: torch.nn.functional.cross_entropy gives 1.7480766773223877.
  const Tensor p = from_vector<float>({0.2f, 0.3f, 0.5f, 1.0f, 0.0f, 0.0f}, {2, 3});
  // The Variable forms, as torch.nn.functional's one tensor type (the Tensor overloads in
  // tensor/ return a Tensor, and batch_norm's a BatchNormResult struct).
  STATIC_REQUIRE(std::is_same_v<decltype(F::cross_entropy(x, p)), Variable>);
  STATIC_REQUIRE(std::is_same_v<decltype(F::batch_norm(x, ones({3}), zeros({3}), Tensor(), Tensor(), true)), Variable>);
  Variable from_tensor = F::cross_entropy(x, p);
  REQUIRE(from_tensor.item() == Approx(1.7480766773223877).epsilon(1e-6));
  REQUIRE(from_tensor.item() == Approx(F::cross_entropy(Variable(x), p).item()));

  const Tensor img = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2, 1});
  Variable bn_tensor = F::batch_norm(img, ones({2}), zeros({2}), Tensor(), Tensor(), true);
  Variable bn_var = F::batch_norm(Variable(img), Variable(ones({2})), Variable(zeros({2})), Tensor(), Tensor(), true);
  REQUIRE(to_vector<float>(bn_tensor.data()) == to_vector<float>(bn_var.data()));
}
