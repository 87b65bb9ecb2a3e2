// Shared by the hooks_worker sources (tests/apps/test_comm_hooks.sh): the process group,
// the small MLP and its data every rank can rebuild, and comparison helpers.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

namespace hooks_test {

using namespace ddl;
using namespace ddl::dist;

#define EXPECT(cond, ...) \
  if (!(cond)) DDL_CHECK(false, "rank ", pg->rank(), ": ", __VA_ARGS__)

inline std::shared_ptr<ProcessGroup> pg;
inline constexpr int64_t kBatch = 4, kIn = 12, kClasses = 3;

// With BatchNorm (Join's test): training forward uses each rank's own batch statistics, so
// the weights' reference is unchanged, and DDP's buffer broadcasts run under Join.
inline bool with_batchnorm = false;
inline std::shared_ptr<nn::Sequential> make_mlp() {
  manual_seed(3);
  std::vector<std::shared_ptr<nn::Module>> layers{std::make_shared<nn::Linear>(kIn, 16)};
  if (with_batchnorm) layers.push_back(std::make_shared<nn::BatchNorm1d>(16));
  layers.push_back(std::make_shared<nn::ReLU>());
  layers.push_back(std::make_shared<nn::Linear>(16, kClasses));
  return std::make_shared<nn::Sequential>(layers);
}

// Batch `step` of rank `rank`: the same tensors in every process.
inline std::pair<Tensor, Tensor> batch(int rank, int64_t step) {
  Generator g(1000 * step + rank);
  return {randn({kBatch, kIn}, g), randint(0, kClasses, {kBatch}, g)};
}

inline Variable loss_of(nn::Module& m, int rank, int64_t step) {
  auto [x, y] = batch(rank, step);
  return cross_entropy(m.forward(Variable(x)), y);
}

inline std::vector<Tensor> grads(nn::Module& m) {
  std::vector<Tensor> out;
  for (auto& p : m.parameters()) out.push_back(p.grad().clone());
  return out;
}

// Each rank's local gradients at `model`'s current weights (computed by every process).
inline std::vector<std::vector<Tensor>> local_grads(nn::Module& model, int64_t step) {
  std::vector<std::vector<Tensor>> out;
  for (int r = 0; r < pg->size(); ++r) {
    auto copy = make_mlp();
    for (size_t i = 0; i < copy->parameters().size(); ++i)
      copy->parameters()[i].data().copy_(model.parameters()[i].data());
    loss_of(*copy, r, step).backward();
    out.push_back(grads(*copy));
  }
  return out;
}

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(), a.nbytes()) == 0;
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item();
}

inline int64_t all_reduce_bytes() { return pg->stats()[OpKind::AllReduce].bytes_sent; }

// hooks_worker_powersgd.cpp
void check_powersgd(int64_t rank);
void check_powersgd_torch();

}  // namespace hooks_test
