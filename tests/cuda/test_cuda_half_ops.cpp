// float16/bfloat16 elementwise ops and reductions on CUDA run in one pass
// (load 16 bits, compute in float, round once) with the bits of the cast path
// they replace: the op on float32 copies, rounded to 16 bits after each op
// (Note [Half compute]). Checked bit for bit against that path on the GPU,
// and against the CPU (which still casts) where float32 math is exact on both.
// Also: LossScaler's one-sync inf/NaN check on CUDA gradients. Skipped (exit
// 77) without a GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();
using Ts = std::vector<Tensor>;
using Op = std::function<Tensor(const Ts&)>;

std::vector<uint8_t> bytes(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<uint8_t> out(static_cast<size_t>(c.nbytes()));
  if (!out.empty()) std::memcpy(out.data(), c.raw_data(), out.size());
  return out;
}

// The same values in a non-contiguous layout, so sum() takes reduce()'s
// general path (no sum_middle), the one the 16-bit cast path took.
Tensor strided_copy(const Tensor& t) {
  if (t.dim() < 2) return t;
  return t.transpose(0, t.dim() - 1).contiguous().transpose(0, t.dim() - 1);
}

Ts to_float(const Ts& in) {
  Ts out;
  for (const Tensor& t : in) out.push_back(is_reduced_float(t.dtype()) ? t.to(DType::Float32) : t);
  return out;
}

// op on the 16-bit CUDA operands == op on their float32 copies, rounded to the
// result's dtype, bit for bit (ref: another float32 computation of the cast path).
void require_cast_path(const Op& op, const Ts& in, const Op& ref = nullptr) {
  const Tensor got = op(in);
  REQUIRE(got.device() == kCuda);
  const Tensor want = (ref ? ref : op)(to_float(in));
  REQUIRE(bytes(got) == bytes(want.to(got.dtype())));
}

// And the CPU, which computes 16-bit ops through float32 copies, gives the same bits.
void require_cpu_bits(const Op& op, const Ts& in) {
  Ts cpu;
  for (const Tensor& t : in) cpu.push_back(t.to(Device::cpu()));
  const Tensor got = op(in), want = op(cpu);
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(bytes(got) == bytes(want));
}

// A 16-bit CUDA tensor from float values, with NaN, +-inf and -0 in it.
Tensor half_input(const Shape& shape, uint64_t seed, DType h, double scale = 1.0) {
  Generator g(seed);
  Tensor x = mul(randn(shape, g), scale);
  const Tensor flat = x.view({x.numel()});
  flat.narrow(0, 1, 1).fill_(std::numeric_limits<double>::quiet_NaN());
  flat.narrow(0, 5, 1).fill_(std::numeric_limits<double>::infinity());
  flat.narrow(0, 9, 1).fill_(-std::numeric_limits<double>::infinity());
  flat.narrow(0, 12, 1).fill_(-0.0);
  return x.to(h).to(kCuda);
}

}  // namespace

TEST_CASE("16-bit CUDA elementwise ops give the cast path's bits", "[cuda][half]") {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    // With NaN, +-inf and -0; and finite, for the CPU (a NaN made on the GPU has another sign bit).
    const Tensor a = half_input({33, 65}, 1, h), b = half_input({65}, 2, h), at = half_input({65, 33}, 3, h).t();
    const Tensor c = half_input({33, 65}, 4, h, 3.0);
    Generator g(10);
    const Tensor fa = randn({33, 65}, g).to(h).to(kCuda), fb = randn({65}, g).to(h).to(kCuda);
    const Tensor fat = randn({65, 33}, g).to(h).to(kCuda).t();
    // Exact in float32 (single roundings, no contraction to change): also the CPU's bits.
    const std::vector<std::pair<const char*, Op>> exact = {
        {"add broadcast", [](const Ts& t) { return add(t[0], t[1]); }},
        {"add alpha 2", [](const Ts& t) { return add(t[0], t[1], 2.0); }},
        {"sub", [](const Ts& t) { return sub(t[0], t[1]); }},
        {"mul", [](const Ts& t) { return mul(t[0], t[1]); }},
        {"div", [](const Ts& t) { return div(t[0], t[1]); }},
        {"maximum", [](const Ts& t) { return maximum(t[0], t[1]); }},
        {"lt", [](const Ts& t) { return lt(t[0], t[1]); }},
        {"mul scalar", [](const Ts& t) { return mul(t[0], 0.37); }},
        {"add scalar", [](const Ts& t) { return add(t[0], 1.3); }},
        {"rsub scalar", [](const Ts& t) { return rsub(t[0], 0.7); }},
        {"clamp", [](const Ts& t) { return clamp(t[0], -0.5, 0.25); }},
        {"relu", [](const Ts& t) { return relu(t[0]); }},
        {"neg", [](const Ts& t) { return neg(t[0]); }},
        {"relu_backward", [](const Ts& t) { return relu_backward(t[0], t[1]); }},
        {"where", [](const Ts& t) { return where(gt(t[0], 0.0), t[0], t[1]); }},
        {"non-contiguous", [](const Ts& t) { return add(t[2], t[0]); }},
        {"non-contiguous relu", [](const Ts& t) { return relu(t[2]); }},
    };
    for (const auto& [name, op] : exact) {
      INFO(name);
      require_cast_path(op, {a, b, at});
      require_cast_path(op, {fa, fb, fat});
      require_cpu_bits(op, {fa, fb, fat});
    }
    // Library math (expf, erff, tanhf) and a + alpha * b, which nvcc may fuse
    // into one rounding: the GPU's float32 path, not necessarily the CPU's.
    const std::vector<std::pair<const char*, Op>> gpu_only = {
        {"add alpha 0.3", [](const Ts& t) { return add(t[0], t[1], 0.3); }},
        {"exp", [](const Ts& t) { return exp(t[0]); }},
        {"tanh", [](const Ts& t) { return tanh(t[0]); }},
        {"sigmoid", [](const Ts& t) { return sigmoid(t[0]); }},
        {"erf", [](const Ts& t) { return erf(t[0]); }},
        {"sqrt", [](const Ts& t) { return sqrt(t[0]); }},
        {"pow 3", [](const Ts& t) { return pow(t[0], 3.0); }},
        {"tanh_backward", [](const Ts& t) { return tanh_backward(t[0], t[1]); }},
    };
    for (const auto& [name, op] : gpu_only) {
      INFO(name);
      require_cast_path(op, {c, b});
    }
    // gelu: each of its ops rounds to 16 bits, as the cast path did op by op.
    const auto r = [h](const Tensor& t) { return t.to(h).to(DType::Float32); };
    const Tensor cf = c.to(DType::Float32);
    const Tensor cdf = r(mul(r(add(r(erf(r(mul(cf, std::numbers::sqrt2 / 2)))), 1.0)), 0.5));
    REQUIRE(bytes(gelu(Variable(c)).data()) == bytes(mul(cf, cdf).to(h)));
    // A NaN with its own payload leaves where() as a float32 round trip leaves it (not copied as is).
    Tensor odd = empty({2}, h);
    const uint16_t nan_bits[2] = {static_cast<uint16_t>(h == DType::Float16 ? 0xFC01 : 0xFF81), 0x7C01};
    std::memcpy(odd.raw_data(), nan_bits, sizeof nan_bits);
    const Tensor cond = from_vector<uint8_t>({1, 1}, {2}).to(DType::Bool).to(kCuda);
    require_cast_path([](const Ts& t) { return where(t[0], t[1], t[2]); }, {cond, odd.to(kCuda), fb.narrow(0, 0, 2)});
  }
}

TEST_CASE("16-bit CUDA in-place and mixed-dtype ops keep the cast path's bits and promotion", "[cuda][half]") {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor a = half_input({33, 65}, 5, h), b = half_input({65}, 6, h);
    const Tensor af = a.to(DType::Float32), bf = b.to(DType::Float32);
    Tensor x = a.clone();
    x.add_(b, 0.3);
    REQUIRE(bytes(x) == bytes(add(af, bf, 0.3).to(h)));
    Tensor want = add(af, bf, 0.3).to(h).to(DType::Float32);
    x.mul_(0.37);
    REQUIRE(bytes(x) == bytes(mul(want, 0.37).to(h)));
    want = mul(want, 0.37).to(h).to(DType::Float32);
    x.add_(1.5);
    REQUIRE(bytes(x) == bytes(add(want, 1.5).to(h)));
    want = add(want, 1.5).to(h).to(DType::Float32);
    x.mul_(b);
    REQUIRE(bytes(x) == bytes(mul(want, bf).to(h)));
    x.clamp_(-1.0, 1.0);
    REQUIRE(bytes(x) == bytes(clamp(mul(want, bf).to(h).to(DType::Float32), -1.0, 1.0).to(h)));
    // A float32 operand promotes to float32; a float32 operand of an in-place op is not rounded first.
    const Tensor f = mul(bf, 1.0 / 3.0);
    REQUIRE(add(a, f).dtype() == DType::Float32);
    REQUIRE(bytes(add(a, f)) == bytes(add(af, f)));
    Tensor y = a.clone();
    y.add_(f);
    REQUIRE(bytes(y) == bytes(add(af, f).to(h)));
    // An integer operand keeps the 16-bit type and reaches float32 unrounded (2049 is not a float16).
    const Tensor ones = full({2}, 1.0, TensorOptions(h, kCuda));
    const Tensor ints = from_vector<int64_t>({2049, 4097}, {2}).to(kCuda);
    REQUIRE(add(ones, ints).dtype() == h);
    REQUIRE(bytes(add(ones, ints)) == bytes(add(ones.to(Device::cpu()), ints.to(Device::cpu()))));
    REQUIRE(bytes(add(ones, ints)) == bytes(add(ones.to(DType::Float32), ints).to(h)));
  }
}

TEST_CASE("16-bit CUDA reductions give the cast path's bits", "[cuda][half][reduce]") {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor img = half_input({8, 16, 5, 7}, 7, h);
    Generator g(8);
    const Tensor img_finite = randn({8, 16, 5, 7}, g).to(h).to(kCuda);
    const Tensor big = randn({3 * 8192 + 5}, g).to(h).to(kCuda);  // chunked: two passes
    const Tensor wide = randn({40, 2100}, g).to(h).to(kCuda);     // sum over {0}: [A, C] with B = 1
    const Tensor strided = randn({65, 33}, g).to(h).to(kCuda).t();
    const auto old_sum = [](std::vector<int64_t> dims) {
      return [dims](const Ts& t) { return sum(strided_copy(t[0]), dims); };
    };
    const std::vector<std::tuple<const char*, Tensor, Op, Op>> cases = {
        {"sum {0,2,3}", img_finite,
         [](const Ts& t) {
           return sum(t[0], {0, 2, 3});
         },
         old_sum({0, 2, 3})},
        {"sum {0,2,3} (specials)", img,
         [](const Ts& t) {
           return sum(t[0], {0, 2, 3});
         },
         old_sum({0, 2, 3})},
        {"sum {0,2,3} keepdim", img_finite,
         [](const Ts& t) {
           return sum(t[0], {0, 2, 3}, true);
         },
         [](const Ts& t) {
           return sum(strided_copy(t[0]), {0, 2, 3}, true);
         }},
        {"sum all", big, [](const Ts& t) { return sum(t[0]); }, nullptr},
        {"sum {0} of [40, 2100]", wide, [](const Ts& t) { return sum(t[0], {0}); }, old_sum({0})},
        {"sum {1} non-contiguous", strided, [](const Ts& t) { return sum(t[0], {1}); }, old_sum({1})},
        {"mean {0,2,3}", img_finite,
         [](const Ts& t) {
           return mean(t[0], {0, 2, 3});
         },
         nullptr},
        {"mean all", big, [](const Ts& t) { return mean(t[0]); }, nullptr},
        {"mean {0} of [40, 2100]", wide, [](const Ts& t) { return mean(t[0], {0}); }, nullptr},
        {"mean {0} non-contiguous", strided, [](const Ts& t) { return mean(t[0], {0}); }, nullptr},
        {"amax {1} (specials)", img, [](const Ts& t) { return amax(t[0], {1}); }, nullptr},
        {"amin {0,2,3} (specials)", img,
         [](const Ts& t) {
           return amin(t[0], {0, 2, 3});
         },
         nullptr},
        {"argmax {1} (specials)", img, [](const Ts& t) { return argmax(t[0], 1); }, nullptr},
        {"amax {1}", img_finite, [](const Ts& t) { return amax(t[0], {1}); }, nullptr},
    };
    for (const auto& [name, x, op, ref] : cases) {
      INFO(name);
      require_cast_path(op, {x}, ref);
      if (std::string(name).find("specials") == std::string::npos) {
        const Tensor got = op({x}), cpu = op({x.to(Device::cpu())});  // other accumulation order: close
        REQUIRE(got.dtype() == cpu.dtype());
        REQUIRE(allclose(got.to(Device::cpu()).to(DType::Float64), cpu.to(DType::Float64), 2e-2, 2e-2));
      }
    }
    // amax, amin and argmax pick an element: exactly the CPU's.
    REQUIRE(bytes(amax(img, {1})) == bytes(amax(img.to(Device::cpu()), {1})));
    REQUIRE(bytes(argmax(img, 1)) == bytes(argmax(img.to(Device::cpu()), 1)));
  }
}

TEST_CASE("LossScaler on CUDA gradients: inf or NaN in any parameter skips the step", "[cuda][loss_scaler]") {
  struct Case {
    std::vector<float> ga, gb, gc;
    bool steps;
  };
  const float finf = std::numeric_limits<float>::infinity(), fnan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Case> cases = {
      {{1, finf}, {2, 3}, {fnan, 4}, false},
      {{1, 2}, {-finf, 3}, {5, 4}, false},
      {{1, 2}, {2, 3}, {5, fnan}, false},
      {{3e38f, 3e38f}, {-3e38f, -3e38f}, {1, 2}, true},  // finite; their sum overflows float32
      {{1, 2}, {2, 3}, {5, 4}, true},
  };
  for (const Case& k : cases) {
    std::vector<Variable> p;
    for (int i = 0; i < 3; ++i) p.emplace_back(zeros({2}, TensorOptions(DType::Float32, kCuda)), true);
    optim::SGD opt(p, optim::SGDOptions{.lr = 1.0});
    optim::LossScaler scaler(optim::LossScalerOptions{.init_scale = 1.0});
    scaler.scale(add(add(sum(p[0]), sum(p[1])), sum(p[2]))).backward();
    const std::vector<std::vector<float>> gs = {k.ga, k.gb, k.gc};
    for (int i = 0; i < 3; ++i) p[i].grad().copy_(from_vector<float>(gs[i], {2}).to(kCuda));
    REQUIRE(scaler.step(opt) == k.steps);
    scaler.update();
    REQUIRE(scaler.get_scale() == (k.steps ? 1.0 : 0.5));
    REQUIRE(scaler.growth_tracker() == (k.steps ? 1 : 0));
    for (int i = 0; i < 3; ++i) {
      const std::vector<double> w = to_vector<double>(p[i].data().to(Device::cpu()));
      REQUIRE(w[0] == (k.steps ? -static_cast<double>(gs[i][0]) : 0.0));
    }
  }
}

TEST_CASE("a 16-bit in-place op on CUDA reads an overlapping operand as it was", "[cuda][half]") {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor x0 = arange(0, 64 * 64, 1, DType::Float32).reshape({64, 64}).to(h);
    const Tensor x = x0.to(kCuda);
    x.add_(x.t());  // written in place while its transpose is read
    REQUIRE(to_vector<float>(x.to(DType::Float32)) == to_vector<float>(add(x0, x0.t()).to(DType::Float32)));
  }
}
