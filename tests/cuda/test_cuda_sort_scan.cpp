// CUDA sort, argsort, topk, kthvalue, cumsum, cumprod and their gradients
// against the CPU backend on the same inputs. Every result must equal the CPU's
// bit for bit (the CUDA kernels are built to: see Note [CUDA sort keys] and
// Note [Sequential CUDA scans]): ties, NaN of either sign, -0.0 against +0.0,
// infinities, every dtype the CPU takes, empty, 0-d, strided inputs, one long
// row, many short rows and a few long ones; and many rows sort without a host sync.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using V = std::vector<Variable>;

namespace {

const Device kCuda = Device::cuda();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Same shape and dtype, and the same bytes; where `any_nan` and the CPU has a
// NaN, any NaN. (Arithmetic that makes or carries a NaN gives x86's NaN bits on
// the CPU and the GPU's canonical NaN, so scans compare NaN by position only;
// sort only copies values, so its NaNs must keep their bits.)
void require_same(const Tensor& on_gpu, const Tensor& on_cpu, bool any_nan = false) {
  REQUIRE(on_gpu.device() == kCuda);
  REQUIRE(on_cpu.device().is_cpu());
  const Tensor g = on_gpu.to(Device::cpu()).contiguous(), c = on_cpu.contiguous();
  REQUIRE(g.shape() == c.shape());
  REQUIRE(g.dtype() == c.dtype());
  if (std::memcmp(g.raw_data(), c.raw_data(), c.nbytes()) == 0) return;
  // Find the first difference (float32 widens to double exactly, NaN sign and payload included).
  const std::vector<double> a = to_vector<double>(g), b = to_vector<double>(c);
  const bool nan_ok = any_nan && is_floating(c.dtype());
  auto same = [&](size_t i) {
    if (nan_ok && std::isnan(b[i])) return std::isnan(a[i]);
    return std::memcmp(&a[i], &b[i], sizeof(double)) == 0;
  };
  size_t bad = 0;
  while (bad < a.size() && same(bad)) ++bad;
  if (nan_ok && bad == a.size()) return;  // the bytes differed only in NaN bits
  INFO("first difference at element " << bad << " of " << a.size() << ": cuda " << (bad < a.size() ? a[bad] : 0.0)
                                      << ", cpu " << (bad < a.size() ? b[bad] : 0.0));
  REQUIRE(false);
}

enum class Values { Tricky, Finite, Factors };

// Tricky: integers in -4..4 (many ties), a few with fractions; floats also get
// NaN of both signs, -0.0, +0.0, infinities and subnormals. Finite: the same
// without NaN and infinities. Factors (for cumprod): floats in [0.9, 1.1] with
// rare zeros, NaN and infinities; integers in {-1, 0, 1} ({0, 1} for uint8), so
// products neither overflow nor lose their low bits too soon.
Tensor make_values(DType t, const Shape& shape, uint64_t seed, Values kind = Values::Tricky) {
  std::mt19937_64 rng(seed);
  const size_t n = static_cast<size_t>(shape.numel());
  const double specials[] = {kNaN, -kNaN, -0.0, 0.0, kInf, -kInf};  // -kNaN has its sign bit set
  std::vector<double> v(n);
  for (double& e : v) {
    const int r = static_cast<int>(rng() % 1000);
    const double small = static_cast<double>(static_cast<int>(rng() % 9) - 4);
    if (kind == Values::Factors)
      e = r < 6 ? specials[r] : 1.0 + static_cast<double>(static_cast<int>(rng() % 2001) - 1000) * 1e-4;
    else if (kind == Values::Tricky && r < 300)
      e = specials[r % 6];
    else if (r < 400)
      e = small + static_cast<double>(rng() % 1000) * 1e-3;
    else if (r < 450)
      e = 1e-310 * small;  // subnormal in float64, 0 in float32
    else
      e = small;
  }
  switch (t) {
    case DType::Float32: {
      std::vector<float> f(n);
      for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(v[i]);
      return from_vector(f, shape);
    }
    case DType::Float64:
      return from_vector(v, shape);
    default: {
      std::vector<int64_t> q(n);
      for (size_t i = 0; i < n; ++i) {
        const double x = std::isfinite(v[i]) ? v[i] : 2.0;
        if (kind == Values::Factors)
          q[i] = t == DType::UInt8 ? int64_t(rng() % 2) : int64_t(rng() % 3) - 1;
        else
          q[i] = t == DType::UInt8 ? static_cast<int64_t>(std::abs(x) * 31) % 256 : static_cast<int64_t>(x * 1000003.0);
      }
      return from_vector(q, shape).to(t);
    }
  }
}
Tensor tricky(DType t, const Shape& shape, uint64_t seed) { return make_values(t, shape, seed); }

const std::vector<DType> kSortTypes = {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::UInt8};

// Views of `base` the kernels get: itself, a transpose and a narrowed slice (both strided).
std::vector<Tensor> views_of(const Tensor& base) {
  std::vector<Tensor> out = {base};
  if (base.dim() >= 2) {
    out.push_back(base.transpose(0, base.dim() - 1));
    if (base.size(-1) > 2) out.push_back(base.narrow(base.dim() - 1, 1, base.size(-1) - 2));
  }
  return out;
}

// Row lengths from 1 to 5000, 1 to 2000 rows: one row takes a plain radix sort,
// several rows composite (row, key) keys, or two passes for 64-bit keys.
const std::vector<Shape> kShapes = {{},     {0},       {1},       {7},       {0, 5},     {5, 0},
                                    {4, 9}, {3, 4, 5}, {2000, 3}, {400, 40}, {300, 300}, {3, 5000}};

}  // namespace

TEST_CASE("cuda sort and argsort equal the CPU's, ties and NaN included", "[cuda][sort]") {
  uint64_t seed = 1;
  for (DType t : kSortTypes)
    for (const Shape& s : kShapes)
      for (const Tensor& x : views_of(tricky(t, s, seed++))) {
        const Tensor xg = x.to(kCuda);
        for (int64_t dim = -std::max<int64_t>(x.dim(), 1); dim < std::max<int64_t>(x.dim(), 1); ++dim)
          for (bool descending : {false, true}) {
            INFO(t << " " << x.shape() << (x.is_contiguous() ? "" : " strided") << " dim " << dim
                   << (descending ? " descending" : ""));
            const ValuesIndices<Tensor> c = sort(x, dim, descending), g = sort(xg, dim, descending);
            require_same(g.values, c.values);
            require_same(g.indices, c.indices);
            require_same(argsort(xg, dim, descending), c.indices);
          }
      }
}

TEST_CASE("cuda sort of long rows equals the CPU's", "[cuda][sort]") {
  for (DType t : kSortTypes)
    for (const Shape& s : std::vector<Shape>{{70000}, {2, 40000}, {8, 20000}}) {
      const Tensor x = tricky(t, s, 100 + s.numel());
      for (bool descending : {false, true}) {
        INFO(t << " " << s << (descending ? " descending" : ""));
        const ValuesIndices<Tensor> c = sort(x, -1, descending), g = sort(x.to(kCuda), -1, descending);
        require_same(g.values, c.values);
        require_same(g.indices, c.indices);
      }
    }
}

// cub::DeviceSegmentedSort, used before, copied the segment sizes to the host
// and waited for the stream when a call had more than 500 rows.
TEST_CASE("cuda sort of many rows does not wait for earlier GPU work", "[cuda][sort][hotpath]") {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  Generator gen(5);
  const Tensor busy = rand({4096, 4096}, gen, TensorOptions(DType::Float32, kCuda));
  for (DType t : {DType::Float32, DType::Float64}) {
    INFO(t);
    const Tensor x = tricky(t, {1024, 100}, 17), xg = x.to(kCuda);
    (void)sort(xg, 1);  // warms the caching allocator: later calls reuse its blocks
    cuda::synchronize();
    const auto t0 = Clock::now();
    for (int i = 0; i < 40; ++i) (void)matmul(busy, busy);  // tens of milliseconds of queued work
    const ValuesIndices<Tensor> g = sort(xg, 1);
    const double call_ms = ms_since(t0);
    cuda::synchronize();
    const double busy_ms = ms_since(t0);
    INFO("sort returned after " << call_ms << " ms of " << busy_ms << " ms of queued work");
    REQUIRE(busy_ms > 20.0);  // else the check below would pass vacuously
    CHECK(call_ms < 10.0);
    const ValuesIndices<Tensor> c = sort(x, 1);
    require_same(g.values, c.values);
    require_same(g.indices, c.indices);
  }
}

TEST_CASE("cuda topk and kthvalue equal the CPU's", "[cuda][sort]") {
  uint64_t seed = 200;
  for (DType t : kSortTypes)
    for (const Shape& s : std::vector<Shape>{{}, {1}, {9}, {5, 0}, {6, 11}, {3, 5000}, {4, 3, 6}})
      for (const Tensor& x : views_of(tricky(t, s, seed++))) {
        const Tensor xg = x.to(kCuda);
        const int64_t d = x.dim() == 0 ? 0 : x.dim() - 1, n = x.dim() == 0 ? 1 : x.size(d);
        for (int64_t k : {int64_t(0), int64_t(1), int64_t(3), n / 2, n}) {
          if (k > n) continue;
          for (bool largest : {true, false}) {
            INFO(t << " " << x.shape() << " topk k " << k << (largest ? " largest" : " smallest"));
            const ValuesIndices<Tensor> c = topk(x, k, d, largest), g = topk(xg, k, d, largest);
            require_same(g.values, c.values);
            require_same(g.indices, c.indices);
            const ValuesIndices<Tensor> cu = topk(x, k, d, largest, false), gu = topk(xg, k, d, largest, false);
            require_same(gu.values, cu.values);
            require_same(gu.indices, cu.indices);
          }
          if (k == 0) continue;
          for (bool keepdim : {false, true}) {
            INFO(t << " " << x.shape() << " kthvalue k " << k << (keepdim ? " keepdim" : ""));
            const ValuesIndices<Tensor> c = kthvalue(x, k, d, keepdim), g = kthvalue(xg, k, d, keepdim);
            require_same(g.values, c.values);
            require_same(g.indices, c.indices);
          }
        }
        if (x.dim() >= 2 && x.size(0) > 0) {  // along the first dim: the kernels see it moved last
          INFO(t << " " << x.shape() << " dim 0");
          require_same(topk(xg, 1, 0).indices, topk(x, 1, 0).indices);
          require_same(kthvalue(xg, 1, 0).values, kthvalue(x, 1, 0).values);
        }
      }
}

TEST_CASE("cuda cumsum and cumprod equal the CPU's bit for bit", "[cuda][scan]") {
  uint64_t seed = 300;
  std::vector<DType> types = kSortTypes;
  types.push_back(DType::Bool);
  for (DType t : types)
    for (const Shape& s : std::vector<Shape>{{}, {0}, {1}, {9}, {0, 4}, {6, 11}, {3, 4, 5}, {2, 5000}, {300, 7}})
      for (Values kind : {Values::Tricky, Values::Finite, Values::Factors}) {
        // cumsum sees tricky and finite values; cumprod factors near 1.
        const DType made = t == DType::Bool ? DType::Int64 : t;
        const Tensor base = make_values(made, s, seed++, kind);
        for (const Tensor& view : views_of(base)) {
          const Tensor x = t == DType::Bool ? ne(view, 0.0) : view, xg = x.to(kCuda);
          for (int64_t dim = -std::max<int64_t>(x.dim(), 1); dim < std::max<int64_t>(x.dim(), 1); ++dim) {
            INFO(t << " " << x.shape() << (x.is_contiguous() ? "" : " strided") << " dim " << dim << " values "
                   << static_cast<int>(kind));
            if (kind != Values::Factors) {
              require_same(cumsum(xg, dim), cumsum(x, dim), true);
              if (is_floating(t)) require_same(cumsum_backward(xg, dim), cumsum_backward(x, dim), true);
            } else {
              require_same(cumprod(xg, dim), cumprod(x, dim), true);
            }
          }
        }
      }
  // One long line: 200000 float32 adds accumulated in double, each output rounded once.
  Generator gen(7);
  const Tensor big = randn({200000}, gen);
  require_same(cumsum(big.to(kCuda), 0), cumsum(big, 0));
  require_same(cumprod(add(mul(big, 1e-3), 1.0).to(kCuda), 0), cumprod(add(mul(big, 1e-3), 1.0), 0));
}

TEST_CASE("cuda sort and scan gradients equal the CPU's", "[cuda][sort][scan][grad]") {
  Generator gen(11);
  const Tensor x = randn({5, 300}, gen);  // distinct values: gradients route unambiguously
  const Tensor ties = make_values(DType::Float64, {4, 50}, 12, Values::Finite);  // ties, subnormals
  using Fn = std::function<Variable(const Variable&)>;
  const std::vector<std::pair<const char*, Fn>> graphs = {
      {"sort", [](const Variable& v) { return sort(v, 1).values; }},
      {"sort descending dim 0", [](const Variable& v) { return sort(v, 0, true).values; }},
      {"topk", [](const Variable& v) { return topk(v, 7, 1).values; }},
      {"topk smallest dim 0", [](const Variable& v) { return topk(v, 2, 0, false).values; }},
      {"kthvalue", [](const Variable& v) { return kthvalue(v, 3, 1).values; }},
      {"kthvalue keepdim", [](const Variable& v) { return kthvalue(v, 2, 0, true).values; }},
      {"cumsum", [](const Variable& v) { return cumsum(v, 1); }},
      {"cumsum dim 0", [](const Variable& v) { return cumsum(v, 0); }},
  };
  for (const Tensor& input : {x, ties})
    for (const auto& [name, f] : graphs) {
      INFO(name << " of " << input.shape() << " " << input.dtype());
      const Variable c(input, true), g(input.to(kCuda), true);
      const Variable yc = f(c), yg = f(g);
      Generator cg(13);
      const Tensor cot = randn(yc.data().shape(), cg, input.dtype());
      yc.backward(cot);
      yg.backward(cot.to(kCuda));
      require_same(yg.data(), yc.data());
      require_same(g.grad(), c.grad());
    }
}

TEST_CASE("cuda sort_backward and scan errors match the CPU's", "[cuda][sort][scan]") {
  const Tensor grad = ones({2, 3}), bad = from_vector<int64_t>({0, 1, 2, 0, 9, 1}, {2, 3});
  const std::string cpu_words = "sort_backward: index 9 out of range [0, 3)";
  REQUIRE_THROWS_WITH(sort_backward(grad, bad, 1, {2, 3}), cpu_words);
  // On the GPU the bad index is found by the kernel and raised at the next sync, in the CPU's words.
  REQUIRE_NOTHROW(sort_backward(grad.to(kCuda), bad.to(kCuda), 1, {2, 3}));
  REQUIRE_THROWS_WITH(cuda::synchronize(), Catch::StartsWith(cpu_words) && Catch::Contains("found on cuda:0"));
  cuda::synchronize();  // raised once, then cleared
  REQUIRE_THROWS_WITH(sort_backward(grad.to(kCuda), bad, 1, {2, 3}), Catch::Contains("sort_backward"));
  // Bool and 16-bit floats sort and scan through exact copies (uint8, float32) on both devices alike.
  const Tensor f = from_vector<float>({3, 1, 2, 1});
  for (const Tensor& x : {ne(f, 1.0), f.to(DType::Float16), f.to(DType::BFloat16)}) {
    const ValuesIndices<Tensor> cpu = sort(x, 0), gpu = sort(x.to(kCuda), 0);
    require_same(gpu.values, cpu.values);
    require_same(gpu.indices, cpu.indices);
    require_same(cumsum(x.to(kCuda), 0), cumsum(x, 0));
  }
  // dtypes the CPU refuses are refused on the GPU with the same message.
  std::string cpu_msg, gpu_msg;
  try {
    topk(ne(f, 1.0), 1);
  } catch (const Error& e) {
    cpu_msg = e.what();
  }
  try {
    topk(ne(f, 1.0).to(kCuda), 1);
  } catch (const Error& e) {
    gpu_msg = e.what();
  }
  REQUIRE(!cpu_msg.empty());
  REQUIRE(gpu_msg == cpu_msg);
}
