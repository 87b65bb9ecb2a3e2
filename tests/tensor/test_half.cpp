// float16/bfloat16 tensors: bit-exact round-to-nearest-even conversions against
// PyTorch 1.13 (tests/golden/mixed_precision.py), every half pattern through
// float and back, an exhaustive check of float -> half rounding against a
// nearest-value search, copies between all dtypes, and the ops that compute
// in float32 and round once (elementwise, sum/mean, matmul, conv2d).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

std::vector<float> edges() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0f,
          -0.0f,
          1.0f,
          -1.0f,
          0.1f,
          float(1.0 / 3.0),
          65504.0f,
          65519.0f,
          65520.0f,
          65536.0f,
          1e5f,
          -1e5f,
          std::ldexp(1.0f, -14),
          std::ldexp(1.0f, -24),
          std::ldexp(1.0f, -25),
          1.5f * std::ldexp(1.0f, -25),
          std::ldexp(1.0f, -26),
          3 * std::ldexp(1.0f, -25),
          float(std::ldexp(1.0, -15) + std::ldexp(1.0, -25)),
          float(1 + std::ldexp(1.0, -11)),
          float(1 + 3 * std::ldexp(1.0, -11)),
          float(1 + std::ldexp(1.0, -8)),
          float(1 + 3 * std::ldexp(1.0, -8)),
          3.0e38f,
          float(3.4028234663852886e38),
          float(1e-40),
          float(-1e-45),
          float(inf),
          float(-inf),
          std::numeric_limits<float>::quiet_NaN()};
}

std::vector<float> sweep() {
  std::vector<float> v;
  for (int i = 0; i < 64; ++i)
    v.push_back(float((i % 2 ? -1.0 : 1.0) * std::ldexp(1.0, (7 * i) % 61 - 30) * (1 + i / 997.0)));
  return v;
}

// PyTorch 1.13's bits (torch.tensor(x, dtype=float32).half() / .bfloat16()).
const std::vector<uint16_t> kEdgesHalf = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x2e66, 0x3555, 0x7bff, 0x7bff,
                                          0x7c00, 0x7c00, 0x7c00, 0xfc00, 0x0400, 0x0001, 0x0000, 0x0001,
                                          0x0000, 0x0002, 0x0200, 0x3c00, 0x3c02, 0x3c04, 0x3c0c, 0x7c00,
                                          0x7c00, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00};
const std::vector<uint16_t> kEdgesBf16 = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x3dcd, 0x3eab, 0x4780, 0x4780,
                                          0x4780, 0x4780, 0x47c3, 0xc7c3, 0x3880, 0x3380, 0x3300, 0x3340,
                                          0x3280, 0x33c0, 0x3800, 0x3f80, 0x3f80, 0x3f80, 0x3f82, 0x7f62,
                                          0x7f80, 0x0001, 0x8000, 0x7f80, 0xff80, 0xffff};
const std::vector<uint16_t> kSweepHalf = {
    0x0000, 0x8002, 0x0101, 0x9803, 0x3404, 0xd005, 0x6c06, 0xfc00, 0x7c00, 0x8000, 0x0008, 0x840b, 0x200c,
    0xbc0d, 0x580e, 0xf40f, 0x7c00, 0xfc00, 0x0000, 0x8021, 0x0c15, 0xa816, 0x4417, 0xe018, 0x7c00, 0xfc00,
    0x7c00, 0x8001, 0x0084, 0x941e, 0x301f, 0xcc20, 0x6821, 0xfc00, 0x7c00, 0x8000, 0x0004, 0x8213, 0x1c27,
    0xb828, 0x5429, 0xf02a, 0x7c00, 0xfc00, 0x0000, 0x8011, 0x082f, 0xa430, 0x4031, 0xdc32, 0x7833, 0xfc00,
    0x7c00, 0x8001, 0x0043, 0x9038, 0x2c3a, 0xc83b, 0x643c, 0xfc00, 0x7c00, 0x8000, 0x0002, 0x8110};
const std::vector<uint16_t> kSweepBf16 = {
    0x3080, 0xb400, 0x3780, 0xbb00, 0x3e81, 0xc201, 0x4581, 0xc901, 0x4c81, 0xb181, 0x3501, 0xb881, 0x3c02,
    0xbf82, 0x4302, 0xc682, 0x4a02, 0xcd82, 0x3282, 0xb602, 0x3983, 0xbd03, 0x4083, 0xc403, 0x4783, 0xcb03,
    0x4e83, 0xb383, 0x3704, 0xba84, 0x3e04, 0xc184, 0x4504, 0xc884, 0x4c04, 0xb104, 0x3485, 0xb805, 0x3b85,
    0xbf05, 0x4285, 0xc605, 0x4985, 0xcd06, 0x3206, 0xb586, 0x3906, 0xbc86, 0x4006, 0xc386, 0x4706, 0xca87,
    0x4e07, 0xb307, 0x3687, 0xba07, 0x3d87, 0xc107, 0x4487, 0xc808, 0x4b88, 0xb088, 0x3408, 0xb788};

template <typename H>
std::vector<uint16_t> bits_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<uint16_t> out(static_cast<size_t>(c.numel()));
  std::memcpy(out.data(), c.raw_data(), out.size() * sizeof(uint16_t));
  return out;
}

void require_bits(const std::vector<float>& x, DType t, const std::vector<uint16_t>& expected) {
  const Tensor h = from_vector<float>(x, {static_cast<int64_t>(x.size())}).to(t);
  REQUIRE(h.dtype() == t);
  const std::vector<uint16_t> got = bits_of<Half>(h);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(t << " of " << x[i] << " (element " << i << ")");
    if (std::isnan(x[i])) {
      // PyTorch's vectorised bfloat16 NaN is 0xffff, its scalar one 0x7fc0: any NaN pattern will do.
      REQUIRE((got[i] & 0x7fffu) > (t == DType::Float16 ? 0x7c00u : 0x7f80u));
    } else {
      REQUIRE(got[i] == expected[i]);
    }
  }
}

float f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

TEST_CASE("float32 -> float16/bfloat16 bits match PyTorch on edge cases and a sweep", "[half]") {
  require_bits(edges(), DType::Float16, kEdgesHalf);
  require_bits(edges(), DType::BFloat16, kEdgesBf16);
  require_bits(sweep(), DType::Float16, kSweepHalf);
  require_bits(sweep(), DType::BFloat16, kSweepBf16);
}

TEST_CASE("every float16 and bfloat16 pattern survives float32 and back", "[half]") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const Half h(static_cast<uint16_t>(b), FromBits{});
    const BFloat16 bf(static_cast<uint16_t>(b), FromBits{});
    const float hf = h, bff = bf;
    const bool h_nan = (b & 0x7fffu) > 0x7c00u, bf_nan = (b & 0x7fffu) > 0x7f80u;
    INFO("pattern " << b);
    REQUIRE(std::isnan(hf) == h_nan);
    REQUIRE(std::isnan(bff) == bf_nan);
    if (!h_nan) REQUIRE(Half(hf).bits == b);
    if (!bf_nan) REQUIRE(BFloat16(bff).bits == b);
  }
  // The smallest subnormal and the largest finite value, exactly.
  REQUIRE(float(Half(uint16_t(1), FromBits{})) == std::ldexp(1.0f, -24));
  REQUIRE(float(Half(uint16_t(0x7bff), FromBits{})) == 65504.0f);
}

TEST_CASE("float32 -> float16 rounds to the nearest value, ties to even, over a float32 sweep", "[half]") {
  // All 65536 halves sorted by value give the reference: the nearest one, the even one on ties.
  std::vector<std::pair<double, uint16_t>> finite;
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const double v = float(Half(static_cast<uint16_t>(b), FromBits{}));
    finite.push_back({v, static_cast<uint16_t>(b)});
  }
  for (uint32_t x = 0; x < 0x47800000u; x += 4093) {  // every 4093rd positive float below 65536
    const double v = f32(x);
    auto it = std::lower_bound(finite.begin(), finite.end(), std::make_pair(v, uint16_t(0)));
    uint16_t expect;
    if (it == finite.end()) {
      expect = v >= 65520.0 ? 0x7c00 : 0x7bff;
    } else if (it == finite.begin() || it->first == v) {
      expect = it->second;
    } else {
      const auto lo = *(it - 1), hi = *it;
      const double dl = v - lo.first, dh = hi.first - v;
      expect = dl < dh ? lo.second : dh < dl ? hi.second : ((lo.second & 1) ? hi.second : lo.second);
      if (hi.second == 0x7bff && v >= 65520.0) expect = 0x7c00;
    }
    INFO("float bits " << x << " value " << v);
    REQUIRE(Half(f32(x)).bits == expect);
    REQUIRE(Half(-f32(x)).bits == (expect | 0x8000));
  }
}

TEST_CASE("copies convert between every dtype and the 16-bit floats", "[half]") {
  const Tensor x = from_vector<float>({-2.5f, 0.0f, 1.0f, 3.0f, 100.5f}, {5});
  for (DType h : {DType::Float16, DType::BFloat16}) {
    const Tensor xh = x.to(h);
    REQUIRE(xh.element_size() == 2);
    REQUIRE(to_vector<double>(xh) == std::vector<double>{-2.5, 0, 1, 3, 100.5});  // all exact in both
    for (DType t : {DType::Float64, DType::Int64, DType::Int32, DType::Bool, DType::Float16, DType::BFloat16}) {
      INFO(h << " -> " << t << " -> " << h);
      const Tensor back = xh.to(t).to(h);
      REQUIRE(allclose(back.to(DType::Float64), x.to(t).to(DType::Float64)));
    }
    // A strided view, a fill and item().
    const Tensor m = arange(0, 12, 1, TensorOptions(DType::Float32)).reshape({3, 4}).to(h);
    REQUIRE(to_vector<double>(m.t().contiguous()) == to_vector<double>(m.to(DType::Float32).t().contiguous()));
    const Tensor f = empty({3}, TensorOptions(h)).fill_(0.1);
    const double tenth = h == DType::Float16 ? double(float(Half(0.1f))) : double(float(BFloat16(0.1f)));
    REQUIRE(f.select(0, 2).item() == tenth);
    REQUIRE(tenth != 0.1);
  }
}

namespace {
// The float32 result of f on float32 copies, rounded once to h: what an op on h tensors must return.
Tensor rounded_reference(const Tensor& r32, DType h) { return r32.to(h); }
void require_same(const Tensor& got, const Tensor& expected) {
  REQUIRE(got.dtype() == expected.dtype());
  REQUIRE(got.shape() == expected.shape());
  REQUIRE(to_vector<double>(got) == to_vector<double>(expected));
}
}  // namespace

TEST_CASE("elementwise ops and reductions on 16-bit tensors compute in float32 and round once", "[half]") {
  Generator g(7);
  const Tensor a32 = randn({4, 5}, g), b32 = randn({5}, g);
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor a = a32.to(h), b = b32.to(h);
    const Tensor af = a.to(DType::Float32), bf = b.to(DType::Float32);
    require_same(add(a, b, 0.5), rounded_reference(add(af, bf, 0.5), h));
    require_same(mul(a, b), rounded_reference(mul(af, bf), h));
    require_same(div(a, b), rounded_reference(div(af, bf), h));
    require_same(exp(a), rounded_reference(exp(af), h));
    require_same(relu(a), rounded_reference(relu(af), h));
    require_same(mul(a, 3.0), rounded_reference(mul(af, 3.0), h));
    require_same(lt(a, b), lt(af, bf));
    // Mixed with float32 the result is float32; float16 with bfloat16 is float32 too (torch.promote_types).
    REQUIRE(add(a, b32).dtype() == DType::Float32);
    REQUIRE(add(a32.to(DType::Float16), b32.to(DType::BFloat16)).dtype() == DType::Float32);
    // In place keeps the dtype.
    Tensor c = a.clone();
    c.add_(b).mul_(2.0);
    require_same(c, rounded_reference(mul(add(af, bf).to(h).to(DType::Float32), 2.0), h));
    // Sums accumulate in float32: 4096 ones sum to 4096 in bfloat16, where a bfloat16 accumulator sticks at 256.
    const Tensor ones = full({4096}, 1.0, TensorOptions(h));
    REQUIRE(sum(ones).dtype() == h);
    REQUIRE(sum(ones).item() == 4096.0);
    require_same(sum(a, {1}), rounded_reference(sum(af, {1}), h));
    require_same(mean(a, {0}), rounded_reference(mean(af, {0}), h));
    require_same(amax(a, {1}), rounded_reference(amax(af, {1}), h));
    REQUIRE(to_vector<int64_t>(argmax(a, 1)) == to_vector<int64_t>(argmax(af, 1)));
  }
}

TEST_CASE("matmul, linear and conv2d on 16-bit tensors accumulate in float32 and round once", "[half]") {
  Generator g(11);
  const Tensor x32 = randn({2, 3, 7, 7}, g), w32 = randn({4, 3, 3, 3}, g), bias32 = randn({4}, g);
  const Tensor a32 = randn({3, 33, 17}, g), b32 = randn({17, 9}, g);
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor a = a32.to(h), b = b32.to(h);
    const Tensor ref = matmul(a.to(DType::Float32), b.to(DType::Float32));
    require_same(matmul(a, b), ref.to(h));
    // Transposed operands are read in place by the GEMM: the same numbers.
    const Tensor a0 = a.select(0, 0), a0f = a0.to(DType::Float32), bf = b.to(DType::Float32);
    require_same(matmul(b.t(), a0.t()), matmul(bf.t(), a0f.t()).to(h));
    // linear adds the bias inside the float32 accumulation and rounds once, as addmm.
    const Tensor bias9 = bias32.narrow(0, 0, 1).expand({9}).contiguous().to(h);
    const Tensor lin = linear(a0, b.t(), bias9);
    require_same(lin, linear(a0f, bf.t(), bias9.to(DType::Float32)).to(h));
    require_same(linear(a.select(0, 1).select(0, 3), b.t(), bias9),
                 linear(a.select(0, 1).select(0, 3).to(DType::Float32), bf.t(), bias9.to(DType::Float32)).to(h));
    Conv2dParams p;
    p.padding = {1, 1}, p.stride = {2, 1};
    const Tensor x = x32.to(h), w = w32.to(h), bias = bias32.to(h);
    const Tensor y = conv2d(x, w, bias, p);
    require_same(y, conv2d(x.to(DType::Float32), w.to(DType::Float32), bias.to(DType::Float32), p).to(h));
    const Tensor gy = mul(y.to(DType::Float32), 0.5).to(h);
    require_same(conv2d_backward_input(gy, w, x.shape(), p),
                 conv2d_backward_input(gy.to(DType::Float32), w.to(DType::Float32), x.shape(), p).to(h));
    require_same(conv2d_backward_weight(gy, x, w.shape(), p),
                 conv2d_backward_weight(gy.to(DType::Float32), x.to(DType::Float32), w.shape(), p).to(h));
  }
}

TEST_CASE("pooling and softmax on 16-bit tensors compute in float32", "[half]") {
  Generator g(13);
  const Tensor x32 = randn({2, 3, 6, 6}, g);
  Pool2dParams pp;
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor x = x32.to(h), xf = x.to(DType::Float32);
    auto [y, idx] = max_pool2d_with_indices(x, pp);
    auto [yf, idxf] = max_pool2d_with_indices(xf, pp);
    require_same(y, yf.to(h));
    REQUIRE(to_vector<int64_t>(idx) == to_vector<int64_t>(idxf));
    require_same(max_pool2d_backward(y, idx, x.shape()), max_pool2d_backward(yf, idxf, x.shape()).to(h));
    require_same(avg_pool2d(x, pp), avg_pool2d(xf, pp).to(h));
    require_same(avg_pool2d_backward(y, x.shape(), pp), avg_pool2d_backward(yf, x.shape(), pp).to(h));
  }
  // softmax computes 16-bit inputs in float32 and rounds once (PyTorch computes bfloat16 too).
  require_same(softmax(x32.to(DType::BFloat16), 1),
               softmax(x32.to(DType::BFloat16).to(DType::Float32), 1).to(DType::BFloat16));
}
