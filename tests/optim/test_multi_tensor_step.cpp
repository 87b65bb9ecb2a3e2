// The multi-tensor SGD and Adam/AdamW steps (optim/multi_tensor.cpp, PyTorch's foreach)
// against the per-tensor steps, bit for bit: many small tensors and a few large ones
// (threaded over the total element count), zero-size parameters, parameters without a
// gradient on some steps (so their Adam step counts differ), float64 and non-contiguous
// parameters (which take the per-tensor step inside the multi-tensor one), two groups
// with different hyper-parameters, and switching paths between steps.
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.raw_data(), bc.raw_data(), ac.nbytes()) == 0;
}

// Two groups of parameters: small, zero-size, large, float64 and a non-contiguous view.
std::vector<std::vector<Variable>> make_params(uint64_t seed) {
  Generator gen(seed);
  std::vector<std::vector<Variable>> groups(2);
  const std::vector<Shape> shapes{{3}, {5, 4},   {0},  {64},       {2, 0, 3}, {7, 3, 3}, {129},
                                  {1}, {300001}, {17}, {512, 257}, {31, 2},   {8}};
  for (size_t k = 0; k < shapes.size(); ++k) groups[k % 2].push_back(Variable(randn(shapes[k], gen), true));
  groups[0].push_back(Variable(randn({4, 4}, gen, TensorOptions(DType::Float64)), true));
  groups[1].push_back(Variable(randn({6, 5}, gen).transpose(0, 1), true));  // not contiguous
  return groups;
}

// Gradients for step `step`: none for every third parameter on odd steps; some non-finite.
void set_grads(std::vector<std::vector<Variable>>& groups, int step) {
  Generator gen(100 + static_cast<uint64_t>(step));
  int k = 0;
  for (auto& g : groups)
    for (Variable& p : g) {
      const bool skip = step % 2 == 1 && k++ % 3 == 0;
      if (skip) {
        p.zero_grad();
        continue;
      }
      Tensor grad = randn(p.shape(), gen, TensorOptions(p.dtype()));
      if (step == 3 && p.numel() > 100 && p.dtype() == DType::Float32) {
        grad.data<float>()[7] = std::numeric_limits<float>::infinity();
        grad.data<float>()[9] = std::numeric_limits<float>::quiet_NaN();
      }
      p.set_grad(grad);
    }
}

using MakeOpt = std::function<std::unique_ptr<optim::Optimizer>(std::vector<std::vector<Variable>>&, bool)>;

// Runs five steps with the multi-tensor path and the per-tensor path; every step's
// parameters and the final state must match bit for bit. switch_paths flips the
// multi-tensor one to per-tensor after step 2 (the state carries over).
void require_same_steps(const MakeOpt& make, bool switch_paths = false) {
  auto ga = make_params(5), gb = make_params(5);
  auto a = make(ga, true), b = make(gb, false);
  for (int step = 0; step < 5; ++step) {
    set_grads(ga, step), set_grads(gb, step);
    if (switch_paths && step == 2) {
      if (auto* s = dynamic_cast<optim::SGD*>(a.get())) s->set_multi_tensor(false);
      if (auto* s = dynamic_cast<optim::Adam*>(a.get())) s->set_multi_tensor(false);
    }
    a->step(), b->step();
    for (size_t g = 0; g < ga.size(); ++g)
      for (size_t k = 0; k < ga[g].size(); ++k) {
        INFO("step " << step << " group " << g << " parameter " << k << " " << ga[g][k].shape());
        REQUIRE(same_bits(ga[g][k].data(), gb[g][k].data()));
      }
  }
  const auto sa = a->state_tensors(), sb = b->state_tensors();
  REQUIRE(sa.size() == sb.size());
  for (size_t k = 0; k < sa.size(); ++k) {
    INFO(sa[k].first);
    REQUIRE(sa[k].first == sb[k].first);
    REQUIRE(same_bits(sa[k].second, sb[k].second));
  }
}

}  // namespace

TEST_CASE("multi-tensor SGD equals the per-tensor step bit for bit", "[optim][multi_tensor]") {
  set_num_threads(2);
  struct Case {
    double momentum, dampening, weight_decay;
    bool nesterov;
  };
  for (const Case c : {Case{0, 0, 0, false}, Case{0, 0, 1e-2, false}, Case{0.9, 0, 0, false},
                       Case{0.9, 0.3, 5e-4, false}, Case{0.9, 0, 1e-3, true}}) {
    INFO("momentum " << c.momentum << " dampening " << c.dampening << " wd " << c.weight_decay << " nesterov "
                     << c.nesterov);
    require_same_steps([&](std::vector<std::vector<Variable>>& g, bool multi) {
      auto opt = std::make_unique<optim::SGD>(g[0], optim::SGDOptions(0.1)
                                                        .momentum(c.momentum)
                                                        .dampening(c.dampening)
                                                        .weight_decay(c.weight_decay)
                                                        .nesterov(c.nesterov)
                                                        .multi_tensor(multi));
      opt->add_param_group(g[1], {{"lr", 0.03}});
      return std::unique_ptr<optim::Optimizer>(std::move(opt));
    });
  }
  require_same_steps(
      [](std::vector<std::vector<Variable>>& g, bool multi) {
        auto opt = std::make_unique<optim::SGD>(g[0], optim::SGDOptions(0.1).momentum(0.8).multi_tensor(multi));
        opt->add_param_group(g[1]);
        return std::unique_ptr<optim::Optimizer>(std::move(opt));
      },
      true);
}

TEST_CASE("multi-tensor Adam and AdamW equal the per-tensor step bit for bit", "[optim][multi_tensor]") {
  set_num_threads(2);
  for (bool decoupled : {false, true})
    for (double wd : {0.0, 1e-2})
      for (bool amsgrad : {false, true}) {
        INFO("decoupled " << decoupled << " wd " << wd << " amsgrad " << amsgrad);
        require_same_steps([&](std::vector<std::vector<Variable>>& g, bool multi) {
          std::unique_ptr<optim::Adam> opt;
          if (decoupled)
            opt = std::make_unique<optim::AdamW>(
                g[0], optim::AdamWOptions(1e-2).weight_decay(wd).amsgrad(amsgrad).multi_tensor(multi));
          else
            opt = std::make_unique<optim::Adam>(
                g[0], optim::AdamOptions(1e-2).weight_decay(wd).amsgrad(amsgrad).multi_tensor(multi));
          opt->add_param_group(g[1], {{"lr", 3e-3}, {"beta1", 0.8}});
          return std::unique_ptr<optim::Optimizer>(std::move(opt));
        });
      }
  require_same_steps(
      [](std::vector<std::vector<Variable>>& g, bool multi) {
        auto opt = std::make_unique<optim::Adam>(g[0], optim::AdamOptions(1e-2).amsgrad(true).multi_tensor(multi));
        opt->add_param_group(g[1]);
        return std::unique_ptr<optim::Optimizer>(std::move(opt));
      },
      true);
}

TEST_CASE("multi-tensor steps: one thread gives the same bits as two", "[optim][multi_tensor]") {
  std::vector<Tensor> results[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    auto g = make_params(9);
    optim::Adam opt(g[0], optim::AdamOptions(1e-2));
    set_grads(g, 0);
    opt.step();
    for (const Variable& p : g[0]) results[threads - 1].push_back(p.data().clone());
  }
  for (size_t k = 0; k < results[0].size(); ++k) REQUIRE(same_bits(results[0][k], results[1][k]));
}

TEST_CASE("multi-tensor steps: a parameter listed twice is stepped twice, in order", "[optim][multi_tensor]") {
  set_num_threads(2);
  for (bool adam : {false, true}) {
    std::vector<Variable> ps[2];
    std::vector<std::unique_ptr<optim::Optimizer>> opts;
    for (int multi = 0; multi < 2; ++multi) {
      Generator gen(21);
      Variable p(randn({2000000}, gen), true), q(randn({50}, gen), true);
      p.set_grad(randn({2000000}, gen)), q.set_grad(randn({50}, gen));
      ps[multi] = {p, q, p};
      if (adam)
        opts.push_back(std::make_unique<optim::Adam>(ps[multi], optim::AdamOptions(0.1).multi_tensor(multi != 0)));
      else
        opts.push_back(
            std::make_unique<optim::SGD>(ps[multi], optim::SGDOptions(0.1).momentum(0.9).multi_tensor(multi != 0)));
    }
    for (int step = 0; step < 3; ++step) opts[0]->step(), opts[1]->step();
    for (size_t k = 0; k < 3; ++k) REQUIRE(same_bits(ps[0][k].data(), ps[1][k].data()));
  }
}
