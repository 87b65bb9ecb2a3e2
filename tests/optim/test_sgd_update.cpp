// sgd_update_ on the CPU: bit for bit the elementwise ops optim::SGD ran per
// parameter before the op existed (kept below as the reference), over the
// hyper-parameter matrix and three steps; its argument checks; and SGD's state.
// The CUDA kernel against the CPU: tests/cuda/test_cuda_sgd.cpp.
#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "tests/common/gradcheck.h"
#include "tests/common/optim_steps.h"
#include <ddl/ddl.h>

using namespace ddl;

namespace {

// optim/sgd.cpp's step body before sgd_update_, verbatim but for names.
void reference_step(const Tensor& w, Tensor d, Tensor& buf, const SgdUpdate& o) {
  if (o.weight_decay != 0) d = add(d, w, o.weight_decay);
  if (o.momentum != 0) {
    if (!buf.defined()) {
      buf = d.clone();
    } else {
      buf.mul_(o.momentum).add_(d, 1 - o.dampening);
    }
    d = o.nesterov ? add(d, buf, o.momentum) : buf;
  }
  w.add_(d, -o.lr);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.raw_data(), bc.raw_data(), ac.nbytes()) == 0;
}

}  // namespace

TEST_CASE("sgd_update_ equals the elementwise ops bit for bit on the CPU", "[optim][sgd]") {
  for (DType dt : {DType::Float32, DType::Float64})
    for (bool strided : {false, true})
      for (const SgdUpdate& o : test::sgd_option_matrix()) {
        INFO(dt << " strided " << strided << " momentum " << o.momentum << " dampening " << o.dampening << " nesterov "
                << o.nesterov << " weight_decay " << o.weight_decay);
        const Tensor w0 = test::random_double({7, 5}, 1).to(dt);
        Tensor w = w0.clone(), w_ref = w0.clone();
        if (strided) w = test::non_contiguous(w);
        Tensor buf, buf_ref;
        for (int step = 0; step < 3; ++step) {
          const Tensor g = test::random_double({7, 5}, 10 + step).to(dt);
          sgd_update_(w, g, buf, o);
          reference_step(w_ref, g, buf_ref, o);
          REQUIRE(same_bits(w, w_ref));
          REQUIRE(buf.defined() == (o.momentum != 0));
          if (buf.defined()) REQUIRE(same_bits(buf, buf_ref));
        }
      }
}

TEST_CASE("optim::SGD steps are the elementwise ops bit for bit and keep momentum_buffer", "[optim][sgd]") {
  const SgdUpdate o{.lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 5e-4};
  Variable w(test::random_double({4, 3}, 2).to(DType::Float32), true);
  optim::SGD opt({w}, {.lr = o.lr, .momentum = o.momentum, .dampening = o.dampening, .weight_decay = o.weight_decay});
  Tensor w_ref = w.data().clone(), buf_ref;
  for (int step = 0; step < 3; ++step) {
    const Tensor g = test::random_double({4, 3}, 20 + step).to(DType::Float32);
    w.set_grad(g.clone());
    opt.step();
    reference_step(w_ref, g, buf_ref, o);
    REQUIRE(same_bits(w.data(), w_ref));
  }
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : opt.state_tensors()) state[name] = t;
  REQUIRE(state.count("state.0.momentum_buffer") == 1);
  REQUIRE(same_bits(state["state.0.momentum_buffer"], buf_ref));
}

TEST_CASE("sgd_update_ rejects mismatched operands naming the op", "[optim][sgd]") {
  const Tensor w = zeros({3, 2}), g = zeros({3, 2});
  Tensor none, buf = zeros({3, 2});
  REQUIRE_THROWS_WITH(sgd_update_(w, zeros({2, 3}), none, {}), Catch::Contains("sgd_update_: the gradient has shape"));
  REQUIRE_THROWS_WITH(sgd_update_(w, Tensor(), none, {}),
                      Catch::Contains("sgd_update_: the parameter and its gradient"));
  REQUIRE_THROWS_WITH(sgd_update_(w, g, buf, {.momentum = 0}), Catch::Contains("no momentum buffer is expected"));
  Tensor bad = zeros({6});
  REQUIRE_THROWS_WITH(sgd_update_(w, g, bad, {.momentum = 0.9}), Catch::Contains("the momentum buffer has shape"));
  REQUIRE_NOTHROW(sgd_update_(w, g, buf, {.momentum = 0.9}));
}
