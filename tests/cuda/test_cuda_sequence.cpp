// The sequence layers (docs/nn_sequence.md) on CUDA: Embedding, LayerNorm, GroupNorm, LSTM,
// GRU, MultiheadAttention and TransformerEncoderLayer, each built on the CPU, cloned
// and moved to the GPU, then run on the same input with one cotangent: outputs and
// every parameter's gradient must match the CPU's (float64, so only the order of
// cuBLAS's and the reductions' sums differs).
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/nn/nn.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();
constexpr double kTol = 1e-9;

void require_close(const Tensor& on_gpu, const Tensor& on_cpu, const std::string& what) {
  INFO(what);
  REQUIRE(on_gpu.device() == kCuda);
  REQUIRE(on_gpu.shape() == on_cpu.shape());
  const std::vector<double> a = to_vector<double>(on_gpu.to(Device::cpu())), b = to_vector<double>(on_cpu);
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": cuda " << a[i] << ", cpu " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= kTol + kTol * std::abs(b[i]));
  }
}

// m on the CPU and its clone on the GPU, fed `input` (a float or index tensor) through
// `run`; the same cotangent goes back through both.
void require_same(nn::Module& m, const Tensor& input, const std::function<Variable(nn::Module&, const Tensor&)>& run) {
  m.to(DType::Float64);
  std::shared_ptr<nn::Module> gpu = m.clone();
  gpu->to(kCuda);
  const bool float_input = is_floating(input.dtype());
  const Tensor in_cpu = float_input ? input.to(DType::Float64) : input;
  const Variable yc = run(m, in_cpu), yg = run(*gpu, in_cpu.to(kCuda));
  const Tensor cot = test::random_double(yc.shape(), 77);
  yc.backward(cot);
  yg.backward(cot.to(kCuda));
  require_close(yg.data(), yc.data(), "output");
  const auto pc = m.named_parameters(), pg = gpu->named_parameters();
  REQUIRE(pc.size() == pg.size());
  for (size_t i = 0; i < pc.size(); ++i) require_close(pg[i].second.grad(), pc[i].second.grad(), pc[i].first);
}

Variable call(nn::Module& m, const Tensor& x) { return m.forward(Variable(x)); }

}  // namespace

TEST_CASE("cuda Embedding matches the CPU, repeated indices and padding included", "[cuda][sequence]") {
  manual_seed(1);
  nn::Embedding e(11, 6, 2);
  const Tensor idx = from_vector(std::vector<int64_t>{3, 2, 3, 10, 0, 3, 2, 7}).reshape({2, 4});
  require_same(e, idx, [](nn::Module& m, const Tensor& x) { return static_cast<nn::Embedding&>(m).forward(x); });
}

TEST_CASE("cuda LayerNorm and GroupNorm match the CPU", "[cuda][sequence]") {
  manual_seed(2);
  nn::LayerNorm ln(Shape{5, 7});
  require_same(ln, test::random_double({3, 5, 7}, 1), call);
  nn::GroupNorm gn(3, 6);
  require_same(gn, test::random_double({2, 6, 4, 5}, 2), call);
}

TEST_CASE("cuda LSTM and GRU match the CPU, two layers, bidirectional", "[cuda][sequence]") {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(4, 5).num_layers(2).bidirectional(true));
  require_same(lstm, test::random_double({6, 3, 4}, 3), call);
  nn::GRU gru(nn::GRUOptions(4, 5).num_layers(2).batch_first(true).bidirectional(true));
  require_same(gru, test::random_double({3, 6, 4}, 4), call);
}

TEST_CASE("cuda MultiheadAttention and TransformerEncoderLayer match the CPU", "[cuda][sequence]") {
  manual_seed(4);
  nn::MultiheadAttention mha(8, 2);
  require_same(mha, test::random_double({5, 3, 8}, 5), call);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  require_same(layer, test::random_double({5, 3, 8}, 6), [](nn::Module& m, const Tensor& x) {
    return static_cast<nn::TransformerEncoderLayer&>(m).forward(
        Variable(x), {.attn_mask = nn::causal_mask(5, x.device()), .key_padding_mask = {}});
  });
}
