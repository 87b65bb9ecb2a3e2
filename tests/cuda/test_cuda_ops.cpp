// CUDA elementwise, copy/fill, reduction, softmax and loss kernels against the
// CPU backend on the same inputs: exact for integer results and copies, rtol
// 1e-5 for float math. Covers non-contiguous, broadcast and empty operands,
// every dtype the CPU kernels take, NaN rules, and bit-for-bit repeatability.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();
Tensor to_gpu(const Tensor& t) { return t.to(kCuda); }
Tensor to_host(const Tensor& t) { return t.to(Device::cpu()); }

// Compares a CUDA result with the CPU one: same shape and dtype; exact for
// integer/bool results, else within rtol/atol, NaN only where the CPU has NaN.
void require_match(const Tensor& on_gpu, const Tensor& on_cpu, double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(on_gpu.device() == kCuda);
  const Tensor g = to_host(on_gpu);
  REQUIRE(g.shape() == on_cpu.shape());
  REQUIRE(g.dtype() == on_cpu.dtype());
  if (g.numel() == 0) return;
  if (!is_floating(g.dtype())) {
    REQUIRE(to_vector<int64_t>(g) == to_vector<int64_t>(on_cpu));
    return;
  }
  const std::vector<double> a = to_vector<double>(g), b = to_vector<double>(on_cpu);
  size_t bad = 0;
  while (bad < a.size() &&
         (std::isnan(b[bad]) ? std::isnan(a[bad]) : std::abs(a[bad] - b[bad]) <= atol + rtol * std::abs(b[bad])))
    ++bad;
  INFO("first mismatch at element " << bad << ": cuda " << (bad < a.size() ? a[bad] : 0.0) << ", cpu "
                                    << (bad < a.size() ? b[bad] : 0.0));
  REQUIRE(bad == a.size());
}

// Same bytes (results of two identical CUDA runs).
bool same_bits(const Tensor& x, const Tensor& y) {
  const Tensor a = to_host(x).contiguous(), b = to_host(y).contiguous();
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

using UnaryT = std::function<Tensor(const Tensor&)>;
using BinaryT = std::function<Tensor(const Tensor&, const Tensor&)>;

// One operand on both backends: `c` a CPU tensor, `g` the same view of a GPU copy
// of its base, so the CUDA kernels see the strides (not a contiguous transfer).
struct Pair {
  Tensor c, g;
};
Pair both(
    const Tensor& base, const UnaryT& view = [](const Tensor& t) { return t; }) {
  Pair p{view(base), view(to_gpu(base))};
  REQUIRE(p.g.strides() == p.c.strides());
  return p;
}

// Runs f on both copies and compares.
void check_unary(const UnaryT& f, const Pair& x, double rtol = 1e-5) {
  INFO("input " << x.c.shape() << " " << x.c.dtype() << (x.c.is_contiguous() ? "" : " (strided)"));
  require_match(f(x.g), f(x.c), rtol);
}
void check_unary(const UnaryT& f, const Tensor& x, double rtol = 1e-5) { check_unary(f, both(x), rtol); }
void check_binary(const BinaryT& f, const Pair& a, const Pair& b) {
  INFO("inputs " << a.c.shape() << " " << a.c.dtype() << (a.c.is_contiguous() ? "" : " (strided)") << ", "
                 << b.c.shape() << " " << b.c.dtype() << (b.c.is_contiguous() ? "" : " (strided)"));
  require_match(f(a.g, b.g), f(a.c, b.c));
}
void check_binary(const BinaryT& f, const Tensor& a, const Tensor& b) { check_binary(f, both(a), both(b)); }

Tensor random_of(DType t, const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  if (is_floating(t)) return randn(shape, gen, t);
  if (t == DType::Bool) return randint(0, 2, shape, gen).to(DType::Bool);
  return randint(0, 40, shape, gen, t);  // small and non-negative: valid for uint8 and exact everywhere
}

// Layouts of one [13, 37] shape: contiguous, transposed, narrowed (row stride 45), and an empty [0, 37].
std::vector<Pair> layouts(DType t, uint64_t seed) {
  return {both(random_of(t, {13, 37}, seed)),
          both(random_of(t, {37, 13}, seed + 1), [](const Tensor& v) { return v.t(); }),
          both(random_of(t, {13, 45}, seed + 2), [](const Tensor& v) { return v.narrow(1, 3, 37); }),
          both(random_of(t, {0, 37}, seed + 3))};
}

const DType kFloat[] = {DType::Float32, DType::Float64};
const DType kNumeric[] = {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::UInt8};
const DType kAll[] = {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::UInt8, DType::Bool};

}  // namespace

TEST_CASE("cuda unary ops match the CPU", "[cuda][elementwise]") {
  const std::vector<UnaryT> ops = {
      [](const Tensor& x) { return neg(x); },
      [](const Tensor& x) { return exp(x); },
      [](const Tensor& x) { return log(abs(x) + 0.1); },
      [](const Tensor& x) { return sqrt(abs(x)); },
      [](const Tensor& x) { return rsqrt(abs(x) + 0.1); },
      [](const Tensor& x) { return abs(x); },
      [](const Tensor& x) { return sign(x); },
      [](const Tensor& x) { return relu(x); },
      [](const Tensor& x) { return sigmoid(x); },
      [](const Tensor& x) { return tanh(x); },
      [](const Tensor& x) { return add(x, 0.75); },
      [](const Tensor& x) { return mul(x, -1.5); },
      [](const Tensor& x) { return rsub(x, 2.0); },
      [](const Tensor& x) { return pow(x, 2.0); },
      [](const Tensor& x) { return pow(abs(x), 1.7); },
      [](const Tensor& x) { return clamp(x, -0.5, 0.25); },
  };
  for (DType t : kFloat)
    for (const Pair& x : layouts(t, 1))
      for (const auto& f : ops) check_unary(f, x);
  // Integer inputs: sign-keeping ops stay integer, math converts to float32 (as on the CPU).
  for (DType t : {DType::Int64, DType::Int32, DType::UInt8})
    for (const Pair& x : layouts(t, 2)) {
      check_unary([](const Tensor& v) { return abs(v); }, x);
      check_unary([](const Tensor& v) { return sign(v); }, x);
      check_unary([](const Tensor& v) { return relu(v); }, x);
      check_unary([](const Tensor& v) { return clamp(v, 3, 20); }, x);
      check_unary([](const Tensor& v) { return add(v, 3.0); }, x);
      check_unary([](const Tensor& v) { return sqrt(v); }, x);
      check_unary([](const Tensor& v) { return exp(mul(v.to(DType::Float64), 0.1)); }, x);
    }
}

TEST_CASE("cuda in-place scalar ops on strided views", "[cuda][elementwise]") {
  for (DType t : kNumeric) {
    const Tensor base = random_of(t, {6, 10}, 3), view = base.narrow(1, 2, 5);
    const Tensor g = to_gpu(base), gview = g.narrow(1, 2, 5);
    view.add_(2.0).mul_(3.0).clamp_(0, 70);
    gview.add_(2.0).mul_(3.0).clamp_(0, 70);
    require_match(g, base);
  }
}

TEST_CASE("cuda binary ops match the CPU, with broadcasting", "[cuda][elementwise]") {
  const std::vector<BinaryT> ops = {
      [](const Tensor& a, const Tensor& b) { return add(a, b, 0.5); },
      [](const Tensor& a, const Tensor& b) { return sub(a, b); },
      [](const Tensor& a, const Tensor& b) { return mul(a, b); },
      [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
      [](const Tensor& a, const Tensor& b) { return minimum(a, b); },
      [](const Tensor& a, const Tensor& b) { return eq(a, b); },
      [](const Tensor& a, const Tensor& b) { return ne(a, b); },
      [](const Tensor& a, const Tensor& b) { return lt(a, b); },
      [](const Tensor& a, const Tensor& b) { return le(a, b); },
      [](const Tensor& a, const Tensor& b) { return gt(a, b); },
      [](const Tensor& a, const Tensor& b) { return ge(a, b); },
      [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a, b); },
  };
  const std::vector<BinaryT> float_ops = {
      [](const Tensor& a, const Tensor& b) { return div(a, b); },
      [](const Tensor& a, const Tensor& b) { return relu_backward(a, b); },
      [](const Tensor& a, const Tensor& b) { return sigmoid_backward(a, b); },
      [](const Tensor& a, const Tensor& b) { return tanh_backward(a, b); },
  };
  for (DType t : kNumeric) {
    const std::vector<Pair> xs = layouts(t, 4), ys = layouts(t, 5);
    const Pair row = both(random_of(t, {37}, 6)), col = both(random_of(t, {13, 1}, 7)),
               scalar = both(random_of(t, {}, 8));
    for (size_t i = 0; i < xs.size(); ++i) {
      for (const auto& f : ops) {
        check_binary(f, xs[i], i == 3 ? ys[3] : ys[(i + 1) % 3]);  // mixed layouts; empty with empty
        if (i == 3) continue;
        check_binary(f, xs[i], row);
        check_binary(f, col, xs[i]);
        check_binary(f, xs[i], scalar);
      }
      if (!is_floating(t) || i == 3) continue;
      for (const auto& f : float_ops) check_binary(f, xs[i], ys[(i + 1) % 3]);
    }
  }
  // Integer / integer division goes to float32; mixed dtypes promote.
  check_binary([](const Tensor& a, const Tensor& b) { return div(a, b + 1); }, layouts(DType::Int64, 9)[1],
               layouts(DType::Int32, 10)[0]);
  check_binary([](const Tensor& a, const Tensor& b) { return add(a, b); }, layouts(DType::UInt8, 11)[0],
               layouts(DType::Float64, 12)[2]);
  // Bool operands: comparisons work (as uint8), arithmetic is refused with the CPU's message.
  const Tensor p = random_of(DType::Bool, {5, 7}, 13), q = random_of(DType::Bool, {7}, 14);
  check_binary([](const Tensor& a, const Tensor& b) { return eq(a, b); }, p, q);
  check_binary([](const Tensor& a, const Tensor& b) { return lt(a, b); }, p, q);
  REQUIRE_THROWS_WITH(add(to_gpu(p), to_gpu(q)), Catch::Contains("arithmetic on bool"));
}

TEST_CASE("cuda NaN rules match the CPU", "[cuda][elementwise][reduce]") {
  Tensor x = random_of(DType::Float32, {6, 50}, 15);
  x.narrow(0, 1, 3).narrow(1, 7, 1).fill_(NAN);  // rows 1-3; row 2 also at 30, 31
  x.select(0, 2).narrow(0, 30, 2).fill_(NAN);
  const Tensor y = random_of(DType::Float32, {6, 50}, 16);
  check_binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); }, x, y);
  check_binary([](const Tensor& a, const Tensor& b) { return minimum(b, a); }, x, y);
  for (int64_t d : {0, 1}) {
    check_unary([d](const Tensor& v) { return amax(v, {d}); }, x);
    check_unary([d](const Tensor& v) { return amin(v, {d}); }, x);
    check_unary([d](const Tensor& v) { return argmax(v, d); }, x);
    check_unary([d](const Tensor& v) { return argmin(v, d); }, x);
  }
  check_unary([](const Tensor& v) { return softmax(v, 1); }, x);
}

TEST_CASE("cuda copies convert every dtype pair exactly", "[cuda][copy]") {
  // Values in [0, 40) (and halves for floats): every conversion is exact and well defined.
  for (DType from : kAll)
    for (DType to : kAll)
      for (const Pair& x : layouts(from, 17)) {
        INFO(from << " -> " << to);
        const auto scaled = [from](const Tensor& v) { return is_floating(from) ? mul(abs(v), 8.0) : v; };
        const Pair src{scaled(x.c), scaled(x.g)};
        require_match(src.g.to(to), src.c.to(to), 0, 0);
        require_match(src.g.contiguous(), src.c.contiguous(), 0, 0);
        // Into a strided destination, from an expanded source.
        const int64_t rows = src.c.size(0), first = std::min<int64_t>(1, rows);
        const Tensor dst_c = zeros({src.c.size(1), rows}, to).t();
        const Tensor dst_g = zeros({src.c.size(1), rows}, {to, kCuda}).t();
        dst_c.copy_(src.c.narrow(0, 0, first).expand(src.c.shape()));
        dst_g.copy_(src.g.narrow(0, 0, first).expand(src.c.shape()));
        require_match(dst_g, dst_c, 0, 0);
      }
  // Many dims: a permuted view that coalescing leaves at 8 dims; clone; a 9-dim contiguous one.
  const std::vector<int64_t> perm = {7, 1, 5, 3, 0, 6, 2, 4};
  const Pair x = both(random_of(DType::Float32, {2, 3, 2, 2, 3, 2, 2, 3}, 18),
                      [&perm](const Tensor& v) { return v.permute(perm); });
  require_match(x.g.contiguous(), x.c.contiguous(), 0, 0);
  require_match(x.g.clone(), x.c.clone(), 0, 0);
  require_match(x.g.to(DType::Float64), x.c.to(DType::Float64), 0, 0);
  const Pair nine =
      both(random_of(DType::Int32, {2, 2, 2, 2, 2, 2, 2, 2, 3}, 19), [](const Tensor& v) { return v.narrow(8, 1, 2); });
  require_match(nine.g.to(DType::Int64), nine.c.to(DType::Int64), 0, 0);
}

TEST_CASE("cuda fill_ and factories on strided views", "[cuda][copy]") {
  for (DType t : kAll) {
    const Tensor c = zeros({7, 9}, t), g = zeros({7, 9}, {t, kCuda});
    c.narrow(1, 2, 4).fill_(1.0);
    g.narrow(1, 2, 4).fill_(1.0);
    c.t().narrow(0, 5, 2).fill_(3.0);
    g.t().narrow(0, 5, 2).fill_(3.0);
    require_match(g, c, 0, 0);
    require_match(full({3, 0}, 2.0, {t, kCuda}), full({3, 0}, 2.0, t), 0, 0);
  }
}

TEST_CASE("cuda reductions match the CPU", "[cuda][reduce]") {
  // Short rows (one thread each), medium rows (one block), long rows (chunks and a second pass).
  const std::vector<Shape> shapes = {{7, 5}, {300, 20}, {4, 1000}, {3, 70001}, {1, 200000}, {2, 3, 0}};
  for (DType t : kNumeric)
    for (const Shape& s : shapes) {
      const Tensor x = random_of(t, s, 19);
      const double rtol = is_floating(t) ? 1e-5 : 0;
      check_unary([](const Tensor& v) { return sum(v); }, x, rtol);
      check_unary([](const Tensor& v) { return sum(v, {-1}); }, x, rtol);
      check_unary([](const Tensor& v) { return sum(v, {0}, true); }, x, rtol);
      if (is_floating(t)) check_unary([](const Tensor& v) { return mean(v, {-1}); }, x, 1e-5);  // no integer mean
      if (x.numel() == 0) continue;
      check_unary([](const Tensor& v) { return amax(v, {-1}); }, x);
      check_unary([](const Tensor& v) { return amin(v, {0}); }, x);
      check_unary([](const Tensor& v) { return argmax(v, -1); }, x);  // ties (small ints): the first index
      check_unary([](const Tensor& v) { return argmin(v, 0); }, x);
      if (is_floating(t)) check_unary([](const Tensor& v) { return var(v, {-1}); }, x, 1e-4);
    }
  // Bool sums count, non-contiguous inputs, several dims at once.
  check_unary([](const Tensor& v) { return sum(v, {1}); }, random_of(DType::Bool, {9, 33}, 20), 0);
  check_unary(
      [](const Tensor& v) {
        return sum(v, {0, 2});
      },
      both(random_of(DType::Float32, {5, 6, 7}, 21), [](const Tensor& v) { return v.transpose(0, 2); }));
  check_unary(
      [](const Tensor& v) {
        return amax(v, {1, 2});
      },
      both(random_of(DType::Int32, {4, 6, 9}, 22), [](const Tensor& v) {
        return v.permute({2, 0, 1});
      }));
}

TEST_CASE("cuda sums over outer and inner dims (sum_middle) match the CPU", "[cuda][reduce]") {
  // [A, C, B] with A and B reduced: block chunks, short channels, and B == 1 with many channels.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{8, 16, 5, 5}, {0, 2, 3}}, {{2, 3, 4}, {0, 2}}, {{64, 4, 300}, {0, 2}},
      {{5, 4096}, {0}},           {{300, 7}, {0}},     {{3, 2, 40000}, {0, 2}}};
  for (DType t : kNumeric)
    for (const auto& c : cases) {
      const std::vector<int64_t>& dims = c.second;  // clang 14 cannot capture a structured binding
      const Tensor x = random_of(t, c.first, 23);
      check_unary([&dims](const Tensor& v) { return sum(v, dims); }, x, is_floating(t) ? 1e-5 : 0);
    }
}

TEST_CASE("cuda sums are bitwise repeatable", "[cuda][reduce]") {
  const Tensor x = to_gpu(random_of(DType::Float32, {3, 150000}, 24));
  const Tensor img = to_gpu(random_of(DType::Float32, {32, 16, 33, 33}, 25));
  REQUIRE(same_bits(sum(x), sum(x)));
  REQUIRE(same_bits(sum(x, {1}), sum(x, {1})));
  REQUIRE(same_bits(sum(img, {0, 2, 3}), sum(img, {0, 2, 3})));
  REQUIRE(same_bits(softmax(x, 1), softmax(x, 1)));
}

TEST_CASE("cuda softmax and log_softmax forward and backward match the CPU", "[cuda][softmax]") {
  // Long contiguous rows (a block each), short rows, and dims with inner > 1 (a thread per column).
  const std::vector<std::pair<Shape, int64_t>> cases = {
      {{8, 1000}, 1},     {{8, 1000}, 0}, {{64, 10}, 1}, {{4, 5, 6, 7}, 1},
      {{4, 5, 6, 7}, -1}, {{3, 4}, 0},    {{0, 5}, 1},   {{}, 0}};
  for (DType t : kFloat)
    for (const auto& [shape, dim] : cases) {
      const Tensor x = mul(random_of(t, shape, 26), 3.0), g = random_of(t, shape, 27);
      const int64_t d = dim;
      check_unary([d](const Tensor& v) { return softmax(v, d); }, x);
      check_unary([d](const Tensor& v) { return log_softmax(v, d); }, x);
      const Tensor y = softmax(x, d), ly = log_softmax(x, d);
      check_binary([d](const Tensor& gy, const Tensor& yy) { return softmax_backward(gy, yy, d); }, g, y);
      check_binary([d](const Tensor& gy, const Tensor& yy) { return log_softmax_backward(gy, yy, d); }, g, ly);
    }
  check_unary([](const Tensor& v) { return softmax(v, 0); },
              both(random_of(DType::Float32, {40, 30}, 28), [](const Tensor& v) { return v.t(); }));
}

TEST_CASE("cuda nll_loss and cross_entropy match the CPU", "[cuda][loss]") {
  Generator gen(29);
  for (DType t : kFloat)
    for (const Shape& shape : {Shape{16, 10}, Shape{4, 5, 6, 7}, Shape{0, 3}}) {
      const Tensor logits = mul(random_of(t, shape, 30), 2.0);
      Shape tshape = shape;
      tshape.erase(1);
      const Tensor target = randint(0, shape[1], tshape, gen);
      if (target.numel() > 3) target.view({-1}).narrow(0, 1, 3).fill_(-100);  // some ignored samples
      const Tensor lp = log_softmax(logits, 1);
      for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
        for (double eps : {0.0, 0.2}) {
          INFO("shape " << shape << " reduction " << static_cast<int>(r) << " eps " << eps);
          const CrossEntropyOptions o{r, -100, eps};
          const Tensor gl = random_of(t, r == Reduction::None ? tshape : Shape{}, 31);
          require_match(cross_entropy(to_gpu(logits), to_gpu(target), o), cross_entropy(logits, target, o));
          require_match(nll_loss_forward(to_gpu(lp), to_gpu(target), o), nll_loss_forward(lp, target, o));
          for (bool through : {false, true})
            require_match(nll_loss_backward(to_gpu(gl), to_gpu(lp), to_gpu(target), o, through),
                          nll_loss_backward(gl, lp, target, o, through));
        }
    }
  // Every sample ignored: Mean is NaN on both backends.
  const Tensor lp = log_softmax(random_of(DType::Float32, {3, 4}, 32), 1);
  const Tensor ignored = full({3}, -100.0, DType::Int64);
  require_match(nll_loss(to_gpu(lp), to_gpu(ignored)), nll_loss(lp, ignored));
}

// The error is found on the device and raised at the next synchronisation point (Note
// [Deferred device errors] in tensor/cuda/common.h): here the copy that reads the loss.
TEST_CASE("cuda losses reject out-of-range targets like the CPU", "[cuda][loss]") {
  const Tensor logits = to_gpu(random_of(DType::Float32, {4, 3}, 33));
  const Tensor bad = to_gpu(from_vector<int64_t>({0, 2, 3, 1}, {4}));
  REQUIRE_THROWS_WITH(to_host(cross_entropy(logits, bad)),
                      Catch::Contains("cross_entropy") && Catch::Contains("target 3"));
  REQUIRE_THROWS_WITH(to_host(nll_loss(logits, to_gpu(from_vector<int64_t>({0, -1, 1, 1}, {4})))),
                      Catch::Contains("nll_loss") && Catch::Contains("sample 1"));
  // The device is still usable afterwards.
  require_match(cross_entropy(logits, to_gpu(from_vector<int64_t>({0, 2, 1, 1}, {4}))),
                cross_entropy(to_host(logits), from_vector<int64_t>({0, 2, 1, 1}, {4})));
}
