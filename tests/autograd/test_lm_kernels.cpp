// The CPU kernels the sequence models lean on, against float64 references computed here:
// column sums of an [A, C] matrix (the bias gradient, sum_middle with nothing trailing)
// and softmax / log_softmax over a contiguous last dim in float32 (attention scores),
// forward and backward, with ragged row lengths and masked (−inf) entries; and the fused
// float32 LSTM step against the same layer in float64.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/autograd/ops/rnn.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {
Tensor uniform64(const Shape& s, uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  return rand(s, gen, DType::Float64) * (hi - lo) + lo;
}

// got (float32 computed) against ref (float64): infinities and zeros where ref has them,
// elsewhere within rtol relative or atol absolute.
void require_close(const Tensor& got, const Tensor& ref, double rtol, double atol) {
  const std::vector<double> g = to_vector<double>(got.to(DType::Float64)), r = to_vector<double>(ref);
  REQUIRE(g.size() == r.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": " << g[i] << " vs " << r[i]);
    if (std::isinf(r[i]) || r[i] == 0)
      REQUIRE(g[i] == r[i]);
    else
      REQUIRE(std::abs(g[i] - r[i]) <= atol + rtol * std::abs(r[i]));
  }
}
}  // namespace

TEST_CASE("sum over leading dims of [A, C]: column sums in double, in row order", "[reduce][lm]") {
  // C = 300 crosses the kernel's 256-column strips; the sums below are those of the rows in
  // order, in double, rounded once: the same bits as the kernel's, at every level this CPU runs.
  const cpu::CpuLevel saved = cpu::cpu_level();
  for (const cpu::CpuLevel level : {cpu::CpuLevel::baseline, cpu::CpuLevel::avx2, cpu::CpuLevel::avx512}) {
    if (!cpu::cpu_runs(level)) continue;
    INFO("level " << cpu::cpu_level_name(level));
    cpu::set_cpu_level(level);
    for (const Shape& s : {Shape{7, 5, 300}, Shape{64, 3}, Shape{1, 1, 513}}) {
      const Tensor x = uniform64(s, 3, -2, 2).to(DType::Float32);
      const int64_t C = s[s.size() - 1], A = x.numel() / C;
      std::vector<int64_t> dims;
      for (int64_t d = 0; d + 1 < s.size(); ++d) dims.push_back(d);
      const Tensor got = sum(x, dims);
      REQUIRE(got.shape() == Shape{C});
      const std::vector<float> xv = to_vector<float>(x), gv = to_vector<float>(got);
      for (int64_t c = 0; c < C; ++c) {
        double ref = 0;
        for (int64_t a = 0; a < A; ++a) ref += static_cast<double>(xv[static_cast<size_t>(a * C + c)]);
        REQUIRE(gv[static_cast<size_t>(c)] == static_cast<float>(ref));
      }
    }
  }
  cpu::set_cpu_level(saved);
}

TEST_CASE("float32 softmax over the last dim matches float64, forward and backward", "[softmax][lm]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const int64_t d : {1, 3, 8, 17, 128, 1000}) {
    INFO("row length " << d);
    // Logits spanning e^-40..1 after the max, and a causal mask's pattern: row r keeps its
    // first r + 1 entries, the rest −inf.
    std::vector<double> xv = to_vector<double>(uniform64({6, d}, static_cast<uint64_t>(d), -20, 20));
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t i = r + 1; i < d; ++i) xv[static_cast<size_t>(r * d + i)] = -inf;
    const Tensor x64 = from_vector<double>(xv).view({6, d}), x32 = x64.to(DType::Float32);
    const Tensor g64 = uniform64({6, d}, static_cast<uint64_t>(d + 7), -1, 1);
    for (const bool log : {false, true}) {
      INFO("log " << log);
      // Forward: the float32 rounding of the input is the reference's input too.
      const Tensor x32as64 = x32.to(DType::Float64);
      require_close(log ? log_softmax(x32, -1) : softmax(x32, -1),
                    log ? log_softmax(x32as64, -1) : softmax(x32as64, -1), 2e-6, 1e-30);
      // Backward through autograd's softmax node against float64's.
      Variable v32(x32, true), v64(x32as64, true);
      const Variable y32 = log ? log_softmax(v32, -1) : softmax(v32, -1);
      const Variable y64 = log ? log_softmax(v64, -1) : softmax(v64, -1);
      y32.backward(g64.to(DType::Float32));
      y64.backward(g64);
      require_close(v32.grad(), v64.grad(), 1e-4, 1e-6);
    }
  }
}

TEST_CASE("float32 softmax rows: a NaN poisons its row, an all −inf row is NaN, as PyTorch", "[softmax][lm]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), ninf = -std::numeric_limits<float>::infinity();
  // torch.softmax(torch.tensor([[1., nan, 2.], [ninf, ninf, ninf], [0., 0., 0.]]), -1):
  // the first two rows all NaN, the third 1/3 each.
  const Tensor x = from_vector<float>({1, nan, 2, ninf, ninf, ninf, 0, 0, 0}).view({3, 3});
  const std::vector<float> y = to_vector<float>(softmax(x, -1));
  for (int i = 0; i < 6; ++i) REQUIRE(std::isnan(y[static_cast<size_t>(i)]));
  for (int i = 6; i < 9; ++i) REQUIRE(y[static_cast<size_t>(i)] == Approx(1.0 / 3).epsilon(1e-7));
}

TEST_CASE("float32 lstm_layer (the fused step) matches float64, outputs and gradients", "[rnn][lm]") {
  // H = 6 leaves a two-lane tail after the four-lane loop; weights scaled so the gates
  // reach the saturated ends of sigmoid and tanh (|pre-activation| up to ~10).
  const int64_t T = 5, B = 3, I = 4, H = 6;
  for (const bool reverse : {false, true}) {
    INFO("reverse " << reverse);
    const std::vector<Tensor> in64 = {uniform64({T, B, I}, 1, -2, 2),      uniform64({B, H}, 2, -1, 1),
                                      uniform64({B, H}, 3, -2, 2),         uniform64({4 * H, I}, 4, -1.5, 1.5),
                                      uniform64({4 * H, H}, 5, -1.5, 1.5), uniform64({4 * H}, 6, -1, 1),
                                      uniform64({4 * H}, 7, -1, 1)};
    std::vector<Variable> v32, v64;
    for (const Tensor& t : in64) {
      const Tensor t32 = t.to(DType::Float32);
      v32.emplace_back(t32, true);
      v64.emplace_back(t32.to(DType::Float64), true);  // the same rounded inputs in float64
    }
    const auto run = [reverse](const std::vector<Variable>& v) {
      return lstm_layer(v[0], v[1], v[2], v[3], v[4], v[5], v[6], reverse);
    };
    const LstmLayerResult r32 = run(v32), r64 = run(v64);
    require_close(r32.output.data(), r64.output.data(), 1e-5, 1e-6);
    require_close(r32.c_n.data(), r64.c_n.data(), 1e-5, 1e-6);
    // A loss touching every output, h_n and c_n.
    const Tensor w = uniform64({T, B, H}, 8, -1, 1);
    const auto loss = [&w](const LstmLayerResult& r, DType dt) {
      return sum(r.output * Variable(w.to(dt))) + sum(r.c_n * r.c_n) + sum(r.h_n);
    };
    loss(r32, DType::Float32).backward();
    loss(r64, DType::Float64).backward();
    for (size_t k = 0; k < v32.size(); ++k) {
      INFO("input " << k);
      require_close(v32[k].grad(), v64[k].grad(), 1e-4, 1e-5);
    }
  }
}

TEST_CASE("float32 exact gelu (the fused kernels) matches float64, forward and backward", "[activation][lm]") {
  // A transposed (non-contiguous) input with 7 x 9 elements (a scalar tail after the
  // four-lane loop), spanning the tails where Φ saturates and φ underflows.
  const Tensor x64 = uniform64({9, 7}, 11, -12, 12).t();
  const Tensor x32 = x64.to(DType::Float32), x32as64 = x32.to(DType::Float64);
  const Tensor g64 = uniform64({7, 9}, 12, -1, 1);
  Variable v32(x32, true), v64(x32as64, true);
  const Variable y32 = gelu(v32), y64 = gelu(v64);
  // Far below 0, Φ(x) = (1 + erf(x/√2))/2 rounds to 0 in float32 (as in PyTorch's float kernel).
  require_close(y32.data(), y64.data(), 2e-6, 1e-6);
  y32.backward(g64.to(DType::Float32));
  y64.backward(g64);
  require_close(v32.grad(), v64.grad(), 2e-6, 1e-7);
}

TEST_CASE("float32 layer_norm (the fused row kernels) matches float64, forward and backward", "[norm][lm]") {
  // Rows of 13 (a tail after the four-wide sums), one of them offset by 1e4 with a spread
  // of 1: the mean and variance must be taken in double for xhat to stay accurate.
  std::vector<double> xv = to_vector<double>(uniform64({6, 13}, 21, -3, 3));
  for (size_t i = 13; i < 26; ++i) xv[i] = 1e4 + xv[i] / 3;
  const Tensor x32 = from_vector<double>(xv).view({2, 3, 13}).to(DType::Float32), x32as64 = x32.to(DType::Float64);
  const Tensor w = uniform64({13}, 22, 0.5, 1.5), b = uniform64({13}, 23, -1, 1);
  const Tensor g64 = uniform64({2, 3, 13}, 24, -1, 1);
  Variable v32(x32, true), v64(x32as64, true), w32(w.to(DType::Float32), true), w64(w, true),
      b32(b.to(DType::Float32), true), b64(b, true);
  const Variable y32 = layer_norm(v32, {13}, w32, b32, 1e-5), y64 = layer_norm(v64, {13}, w64, b64, 1e-5);
  require_close(y32.data(), y64.data(), 1e-5, 1e-6);
  y32.backward(g64.to(DType::Float32));
  y64.backward(g64);
  require_close(v32.grad(), v64.grad(), 1e-4, 1e-5);
  require_close(w32.grad(), w64.grad(), 1e-5, 1e-6);
  require_close(b32.grad(), b64.grad(), 1e-5, 1e-6);
}

TEST_CASE("matmul reads strided-batch operands in place and folds a batch times one matrix", "[matmul][lm]") {
  // ref: the product in float64 of contiguous copies of the same float32 values.
  const auto check = [](const Tensor& a, const Tensor& b) {
    const Tensor ref = matmul(a.contiguous().to(DType::Float64), b.contiguous().to(DType::Float64));
    const Tensor got = matmul(a, b);
    REQUIRE(got.shape() == ref.shape());
    require_close(got, ref, 1e-5, 1e-5);
  };
  const Tensor qkv = uniform64({9, 2 * 3, 3 * 5}, 31, -1, 1).to(DType::Float32);  // [T, B·H, 3·d], d = 5
  // Attention's head split: [B·H, T, d] views with batch stride d and row stride B·H·3·d.
  const Tensor q = qkv.narrow(2, 0, 5).transpose(0, 1), k = qkv.narrow(2, 5, 5).transpose(0, 1);
  const Tensor v = qkv.narrow(2, 10, 5).transpose(0, 1);
  check(q, k.transpose(1, 2));  // scores: B transposed, ld = B·H·3·d
  const Tensor attn = uniform64({6, 9, 9}, 32, 0, 1).to(DType::Float32);
  check(attn, v);                  // context
  check(attn.transpose(1, 2), q);  // a backward's A^T
  check(q.transpose(1, 2), attn.transpose(1, 2));
  // Two batch dims that form one uniform stride, and two that do not (copied first).
  const Tensor x4 = uniform64({3, 7, 4, 6}, 33, -1, 1).to(DType::Float32);
  const Tensor w = uniform64({6, 2}, 34, -1, 1).to(DType::Float32);
  check(x4.narrow(3, 0, 6), w);
  check(x4.permute({1, 0, 2, 3}), w);
  check(x4.permute({1, 0, 2, 3}), uniform64({7, 1, 6, 3}, 35, -1, 1).to(DType::Float32));
  // A batch broadcast against one stacked matrix (stride 0), and the fold of [B, T, K] @ [K, N].
  check(uniform64({4, 6}, 36, -1, 1).to(DType::Float32).expand({5, 4, 6}),
        x4.select(0, 0).narrow(0, 0, 5).transpose(1, 2));
  check(x4.reshape({3, 28, 6}), w);
  check(x4.reshape({3, 28, 6}).narrow(1, 3, 20), w);  // rows a batch apart by 28, not 20: no fold
}

TEST_CASE("float32 gelu at every instruction-set level this CPU runs: a dense grid against float64",
          "[activation][lm]") {
  // 4001 points over [−10, 10] (odd: every level's loop ends in a partial vector), covering
  // both branches of erf (|x|/√2 below and above 1) and its saturation (above 4).
  const Tensor x32 = (arange(0, 4001, 1, DType::Float64) * 0.005 - 10.0).to(DType::Float32);
  const Tensor x64 = x32.to(DType::Float64), g64 = uniform64({4001}, 41, -1, 1);
  Variable v64(x64, true);
  const Variable y64 = gelu(v64);
  y64.backward(g64);
  const cpu::CpuLevel saved = cpu::cpu_level();
  for (const cpu::CpuLevel level : {cpu::CpuLevel::baseline, cpu::CpuLevel::avx2, cpu::CpuLevel::avx512}) {
    if (!cpu::cpu_runs(level)) continue;
    INFO("level " << cpu::cpu_level_name(level));
    cpu::set_cpu_level(level);
    Variable v32(x32, true);
    const Variable y32 = gelu(v32);
    y32.backward(g64.to(DType::Float32));
    require_close(y32.data(), y64.data(), 2e-6, 1e-6);
    require_close(v32.grad(), v64.grad(), 2e-6, 2e-7);
  }
  cpu::set_cpu_level(saved);
}
