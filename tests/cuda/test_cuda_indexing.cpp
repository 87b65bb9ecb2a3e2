// CUDA index-driven ops against the CPU backend on the same inputs: gather,
// scatter(_add), index_select, index_add, advanced indexing and index_put_,
// masked_fill, nonzero, flip and the reflect/replicate pads, forward and
// backward. These ops only move data or add in the CPU's order (Note
// [Deterministic scatter on CUDA]), so results must be bit-identical, repeated
// indices included; only a backward that ends in a reduction gets a tolerance.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using Catch::Matchers::Contains;

namespace {

const Device kCuda = Device::cuda();
Tensor gpu(const Tensor& t) { return t.to(kCuda); }

// The CUDA result has the CPU result's shape, dtype and bytes.
void require_identical(const Tensor& on_gpu, const Tensor& on_cpu) {
  REQUIRE(on_gpu.device() == kCuda);
  const Tensor g = on_gpu.to(Device::cpu()).contiguous(), c = on_cpu.contiguous();
  REQUIRE(g.shape() == c.shape());
  REQUIRE(g.dtype() == c.dtype());
  if (g.numel() == 0 || std::memcmp(g.raw_data(), c.raw_data(), g.nbytes()) == 0) return;
  const std::vector<double> a = to_vector<double>(g), b = to_vector<double>(c);
  size_t i = 0;
  while (i < a.size() && (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) ++i;
  INFO("bits differ; first value mismatch at element " << i << " of " << a.size() << ": cuda "
                                                       << (i < a.size() ? a[i] : 0.0) << ", cpu "
                                                       << (i < a.size() ? b[i] : 0.0));
  FAIL();
}

Tensor random_of(DType t, const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  if (is_floating(t)) return randn(shape, gen, t);
  if (t == DType::Bool) return randint(0, 2, shape, gen).to(DType::Bool);
  return randint(0, 40, shape, gen, t);
}

Tensor random_index(int64_t n, const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return randint(0, n, shape, gen);
}

// index[i][j] = (a * i + b * j) % n: no repeats along a dim where the step is coprime to n.
Tensor affine_index(const Shape& shape, int64_t a, int64_t b, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) v.push_back((a * i + b * j) % n);
  return from_vector(v, shape);
}

// The same index list with its tensors moved to `d`.
std::vector<TensorIndex> on(Device d, const std::vector<TensorIndex>& list) {
  std::vector<TensorIndex> out;
  for (const TensorIndex& ix : list)
    out.push_back(ix.kind() == TensorIndex::Kind::Tensor ? TensorIndex(ix.tensor().to(d)) : ix);
  return out;
}

const DType kAll[] = {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::UInt8, DType::Bool};

}  // namespace

TEST_CASE("cuda gather and index_select match the CPU", "[cuda][indexing]") {
  for (DType t : kAll) {
    INFO("dtype " << t);
    const Tensor x = random_of(t, {6, 5000}, 1), xt = random_of(t, {5000, 6}, 2).t();  // xt: strided
    const Tensor i0 = random_index(6, {9, 5000}, 3), i1 = random_index(5000, {4, 7000}, 4);
    require_identical(gather(gpu(x), 0, gpu(i0)), gather(x, 0, i0));
    require_identical(gather(gpu(x), 1, gpu(i1)), gather(x, 1, i1));
    require_identical(gather(gpu(xt.t()).t(), 1, gpu(i1)), gather(xt, 1, i1));
    const Tensor i1t = random_index(5000, {300, 5}, 5).t();  // a strided index
    require_identical(gather(gpu(x), 1, gpu(i1t)), gather(x, 1, i1t));
    require_identical(gather(gpu(x), -1, gpu(i1.narrow(1, 0, 0))), gather(x, -1, i1.narrow(1, 0, 0)));
    const Tensor rows = random_index(6, {11}, 6), cols = random_index(5000, {3000}, 7);
    require_identical(index_select(gpu(x), 0, gpu(rows)), index_select(x, 0, rows));
    require_identical(index_select(gpu(x), 1, gpu(cols)), index_select(x, 1, cols));
    require_identical(index_select(gpu(x), 1, gpu(cols.to(DType::Int32))), index_select(x, 1, cols));
    require_identical(index_select(gpu(xt.t()).t(), 1, gpu(cols)), index_select(xt, 1, cols));
    require_identical(index_select(gpu(x), 0, gpu(rows.narrow(0, 0, 0))), index_select(x, 0, rows.narrow(0, 0, 0)));
  }
  const Tensor x3 = random_of(DType::Float32, {3, 4, 5}, 8), i3 = random_index(4, {2, 7, 5}, 9);
  require_identical(gather(gpu(x3), 1, gpu(i3)), gather(x3, 1, i3));
  const Tensor s = scalar_tensor(2.5), s_idx = zeros({}, DType::Int64);
  require_identical(gather(gpu(s), 0, gpu(s_idx)), gather(s, 0, s_idx));
}

TEST_CASE("cuda scatter matches the CPU", "[cuda][indexing]") {
  for (DType t : kAll) {
    INFO("dtype " << t);
    const Tensor self = random_of(t, {6, 5000}, 10), src = random_of(t, {7, 5100}, 11);
    // No repeated targets (PyTorch leaves the winner of a repeat unspecified).
    const Tensor down = affine_index({6, 5000}, 1, 1, 6), across = affine_index({6, 3000}, 1, 7, 5000);
    require_identical(scatter(gpu(self), 0, gpu(down), gpu(src)), scatter(self, 0, down, src));
    require_identical(scatter(gpu(self), 1, gpu(across), gpu(src)), scatter(self, 1, across, src));
    require_identical(scatter(gpu(self), 1, gpu(across), 1.0), scatter(self, 1, across, 1.0));
    require_identical(scatter_add(gpu(self), 1, gpu(across), gpu(src)), scatter_add(self, 1, across, src));
    // In place into a strided view of a larger tensor.
    const Tensor big = random_of(t, {5000, 8}, 12), big_g = gpu(big);
    scatter_(big_g.t().narrow(0, 1, 6), 1, gpu(across), gpu(src));
    scatter_(big.t().narrow(0, 1, 6), 1, across, src);
    require_identical(big_g, big);
    // Repeated targets: ddl's documented rule (the last write in index order wins;
    // scatter_add adds in index order) holds on both devices.
    const Tensor repeats = random_index(6, {40, 5000}, 13), src2 = random_of(t, {40, 5000}, 14);
    require_identical(scatter(gpu(self), 0, gpu(repeats), gpu(src2)), scatter(self, 0, repeats, src2));
    require_identical(scatter_add(gpu(self), 0, gpu(repeats), gpu(src2)), scatter_add(self, 0, repeats, src2));
  }
  // float32 sums of many repeats are bit-identical to the CPU's and from run to run.
  const Tensor self = random_of(DType::Float32, {3, 5000}, 15), src = random_of(DType::Float32, {400, 5000}, 16);
  const Tensor idx = random_index(3, {400, 5000}, 17);
  const Tensor first = scatter_add(gpu(self), 0, gpu(idx), gpu(src));
  require_identical(first, scatter_add(self, 0, idx, src));
  require_identical(scatter_add(gpu(self), 0, gpu(idx), gpu(src)), first.to(Device::cpu()));
  const Tensor none = idx.narrow(0, 0, 0);
  require_identical(scatter_add(gpu(self), 0, gpu(none), gpu(src)), scatter_add(self, 0, none, src));
}

TEST_CASE("cuda index_add and masked_fill match the CPU", "[cuda][indexing]") {
  for (DType t : {DType::Float32, DType::Float64, DType::Int64, DType::UInt8}) {
    INFO("dtype " << t);
    const Tensor self = random_of(t, {7, 5000}, 20);
    const Tensor rows = random_index(7, {300}, 21), src_rows = random_of(t, {300, 5000}, 22);
    require_identical(index_add(gpu(self), 0, gpu(rows), gpu(src_rows)), index_add(self, 0, rows, src_rows));
    const Tensor cols = random_index(5000, {2000}, 23), src_cols = random_of(t, {7, 2000}, 24);
    require_identical(index_add(gpu(self), 1, gpu(cols.to(DType::Int32)), gpu(src_cols)),
                      index_add(self, 1, cols, src_cols));
  }
  const Tensor x = random_of(DType::Float32, {4, 5000}, 25), mask = random_of(DType::Bool, {1, 5000}, 26);
  require_identical(masked_fill(gpu(x), gpu(mask), -7.0), masked_fill(x, mask, -7.0));
  const Tensor xt = random_of(DType::Float32, {5000, 4}, 27), xt_g = gpu(xt);
  masked_fill_(xt_g.t(), gpu(mask), 3.0);
  masked_fill_(xt.t(), mask, 3.0);
  require_identical(xt_g, xt);
}

TEST_CASE("cuda advanced indexing matches the CPU", "[cuda][indexing]") {
  const Tensor base = random_of(DType::Float32, {8, 9, 600}, 30);
  const Tensor strided = random_of(DType::Float32, {600, 9, 8}, 31).permute({2, 1, 0});
  const Tensor i0 = random_index(8, {50}, 32), i2 = random_index(600, {50}, 33), i1 = random_index(9, {4, 1}, 34);
  const Tensor i2b = random_index(600, {1, 3}, 35),
               neg = sub(random_index(600, {20}, 36), full({20}, 600.0, DType::Int64));
  const Tensor mask0 = random_of(DType::Bool, {8}, 37), mask01 = random_of(DType::Bool, {8, 9}, 38);
  const std::vector<std::vector<TensorIndex>> lists = {
      {i0},
      {Slice(), i1.reshape({-1})},
      {i0, Slice(), i2},           // separated: the index dims go first
      {Slice(), i1, i2b},          // adjacent, broadcast [4, 1] with [1, 3]
      {mask0},                     //
      {mask01, Slice(2, 500, 3)},  // a 2-D mask, then a slice
      {None, Ellipsis, neg},       // negative indices
      {1, i1.reshape({-1})},       //
      {i0.narrow(0, 0, 0)},        // empty
  };
  for (const Tensor& x : {base, strided}) {
    for (size_t k = 0; k < lists.size(); ++k) {
      INFO("index list " << k << (x.is_contiguous() ? "" : " on a strided tensor"));
      const Tensor expected = x.index(lists[k]);
      require_identical(gpu(x).index(on(kCuda, lists[k])), expected);
      require_identical(gpu(x).index(lists[k]), expected);  // CPU index tensors are moved, as in PyTorch
    }
  }
  for (DType t : kAll) {
    INFO("dtype " << t);
    const Tensor x = random_of(t, {8, 9, 600}, 40);
    require_identical(gpu(x).index(on(kCuda, {i0, Slice(), i2})), x.index({i0, Slice(), i2}));
  }
}

TEST_CASE("cuda index_put_ matches the CPU, repeated indices included", "[cuda][indexing]") {
  for (DType t : kAll) {
    INFO("dtype " << t);
    const Tensor x = random_of(t, {8, 9, 600}, 50);
    const Tensor rows = random_index(8, {200}, 51);  // many repeats
    const Tensor vals = random_of(t, {200, 9, 600}, 52);
    for (bool acc : {false, true}) {
      INFO("accumulate " << acc);
      require_identical(index_put(gpu(x), on(kCuda, {rows}), gpu(vals), acc), index_put(x, {rows}, vals, acc));
      const Tensor i0 = random_index(8, {300}, 53), i2 = random_index(600, {300}, 54);
      const Tensor v2 = random_of(t, {300, 9}, 55);  // x[i0, :, i2] has shape [300, 9]
      require_identical(index_put(gpu(x), on(kCuda, {i0, Slice(), i2}), gpu(v2), acc),
                        index_put(x, {i0, Slice(), i2}, v2, acc));
      const Tensor v3 = random_of(t, {9}, 56);  // broadcast values
      require_identical(index_put(gpu(x), on(kCuda, {i0, Slice(), i2}), gpu(v3), acc),
                        index_put(x, {i0, Slice(), i2}, v3, acc));
    }
    const Tensor mask = random_of(DType::Bool, {8, 9, 600}, 57);
    const Tensor xg = gpu(x), xc = x.clone();
    xg.index_put_(on(kCuda, {mask}), 1.0);
    xc.index_put_({mask}, 1.0);
    require_identical(xg, xc);
  }
  // float32 sums of 50000 rows into 3 places: the CPU's order, bit for bit, every run.
  const Tensor x = random_of(DType::Float32, {3, 64}, 58), rows = random_index(3, {50000}, 59);
  const Tensor vals = random_of(DType::Float32, {50000, 64}, 60);
  const Tensor first = index_put(gpu(x), on(kCuda, {rows}), gpu(vals), true);
  require_identical(first, index_put(x, {rows}, vals, true));
  require_identical(index_put(gpu(x), on(kCuda, {rows}), gpu(vals), true), first.to(Device::cpu()));
  // Into a strided view.
  const Tensor big = random_of(DType::Float32, {600, 8}, 61), big_g = gpu(big);
  const Tensor cols = random_index(600, {900}, 62), cvals = random_of(DType::Float32, {6, 900}, 63);
  index_put_(big_g.t().narrow(0, 1, 6), on(kCuda, {Slice(), cols}), gpu(cvals), true);
  index_put_(big.t().narrow(0, 1, 6), {Slice(), cols}, cvals, true);
  require_identical(big_g, big);
}

TEST_CASE("cuda nonzero matches the CPU", "[cuda][indexing]") {
  Tensor x = random_of(DType::Float32, {3, 5000}, 70);
  x = where(lt(abs(x), 0.5), zeros({}), x);
  x.index_put_({0, 7}, -0.0);  // -0.0 is zero
  x.index_put_({1, 9}, std::nan(""));
  const std::vector<Tensor> inputs = {x,
                                      x.t(),
                                      random_of(DType::Bool, {2, 3, 4, 5}, 71),
                                      random_of(DType::Int32, {7, 1, 300}, 72),
                                      zeros({4, 5}),
                                      zeros({0, 3}),
                                      scalar_tensor(2.0),
                                      scalar_tensor(0.0),
                                      random_of(DType::UInt8, {100000}, 73)};
  for (const Tensor& t : inputs) {
    INFO("input " << describe(t));
    require_identical(nonzero(gpu(t)), nonzero(t));
  }
}

TEST_CASE("cuda flip and the reflect and replicate pads match the CPU", "[cuda][indexing]") {
  const Tensor x = random_of(DType::Float32, {3, 5000}, 80), img = random_of(DType::Float64, {2, 3, 7, 9}, 81);
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {0, 1}, {-1}, {}})
    require_identical(flip(gpu(x), dims), flip(x, dims));
  require_identical(flip(gpu(img).transpose(1, 3), {1, 2}), flip(img.transpose(1, 3), {1, 2}));
  for (PadMode mode : {PadMode::Reflect, PadMode::Replicate}) {
    INFO("mode " << static_cast<int>(mode));
    require_identical(pad(gpu(img), {2, 3, 1, 4}, mode), pad(img, {2, 3, 1, 4}, mode));
    require_identical(pad(gpu(img).transpose(2, 3), {3, 0}, mode), pad(img.transpose(2, 3), {3, 0}, mode));
    require_identical(pad(gpu(x), {4999, 10}, mode), pad(x, {4999, 10}, mode));
  }
}

TEST_CASE("cuda flip and pad do not wait for earlier GPU work", "[cuda][indexing][hotpath]") {
  // Their positions are valid by construction, so no range check reads them back.
  // "Does not wait": about 40 fp32 GEMMs of 4096^3 are queued first (tens of ms on an H100).
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  Generator g(1);
  const Tensor a = rand({4096, 4096}, g, TensorOptions(DType::Float32, kCuda));
  const Tensor x = gpu(random_of(DType::Float32, {8, 3, 64, 64}, 95));
  (void)flip(x, {2, 3}), (void)pad(x, {2, 2, 2, 2}, PadMode::Reflect);  // warm the allocator
  (void)matmul(a, a);  // and cuBLAS: its handle and kernels load on the first call
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  for (int i = 0; i < 40; ++i) (void)matmul(a, a);
  const Tensor flipped = flip(x, {2, 3});
  const Tensor padded = pad(x, {2, 2, 2, 2}, PadMode::Reflect);
  const double call_ms = ms_since(t0);
  INFO("flip and pad returned after " << call_ms << " ms");
  cuda::synchronize(0);
  REQUIRE(ms_since(t0) > 20.0);  // the premise: the GPU was still busy
  CHECK(call_ms < 10.0);
  require_identical(flipped, flip(x.to(Device::cpu()), {2, 3}));
  require_identical(padded, pad(x.to(Device::cpu()), {2, 2, 2, 2}, PadMode::Reflect));
}

TEST_CASE("cuda indexing with a CPU bool mask does not wait for earlier GPU work", "[cuda][indexing][hotpath]") {
  // The mask's nonzero() runs on the CPU; its coordinates are in range by
  // construction, so no range check reads them back from the GPU.
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  Generator g(2);
  const Tensor a = rand({4096, 4096}, g, TensorOptions(DType::Float32, kCuda));
  const Tensor xc = random_of(DType::Float32, {8, 9, 600}, 96), x = gpu(xc);
  const Tensor mask = random_of(DType::Bool, {8, 9}, 97);
  (void)x.index({mask});  // warm the allocator and the pinned staging of uploads
  (void)matmul(a, a);     // and cuBLAS
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  for (int i = 0; i < 40; ++i) (void)matmul(a, a);
  const Tensor picked = x.index({mask});
  const double call_ms = ms_since(t0);
  INFO("index returned after " << call_ms << " ms");
  cuda::synchronize(0);
  REQUIRE(ms_since(t0) > 20.0);  // the premise: the GPU was still busy
  CHECK(call_ms < 10.0);
  require_identical(picked, xc.index({mask}));
}

TEST_CASE("cuda indexing ops take views of up to 25 non-mergeable dims", "[cuda][indexing]") {
  // [2, 2, ..., 2] with its dims reversed: no two neighbours merge, so every dim
  // reaches the kernels (the limit was 8; the CPU has none).
  auto reversed_dims = [](int64_t nd) {
    std::vector<int64_t> p;
    for (int64_t d = nd - 1; d >= 0; --d) p.push_back(d);
    return p;
  };
  const Shape twelve(std::vector<int64_t>(12, 2));
  const Tensor base = random_of(DType::Float32, twelve, 110), base_g = gpu(base);
  const Tensor x = base.permute(reversed_dims(12)), xg = base_g.permute(reversed_dims(12));
  const Tensor idx = random_index(2, twelve, 111), rows = from_vector<int64_t>({1, 0, 1});
  require_identical(gather(xg, 0, gpu(idx)), gather(x, 0, idx));
  require_identical(xg.index({gpu(rows)}), x.index({rows}));
  require_identical(add(xg, 1.0), add(x, 1.0));
  Shape vshape = twelve;
  vshape[0] = 3;
  const Tensor vals = random_of(DType::Float32, vshape, 112);
  index_put_(xg, {gpu(rows)}, gpu(vals), true);
  index_put_(x, {rows}, vals, true);
  require_identical(base_g, base);
  // Past the limit: a ddl::Error that names it, not a bad launch.
  const Shape many(std::vector<int64_t>(26, 2));  // 64 MiB of uint8
  const Tensor wide = ones(many, TensorOptions(DType::UInt8, kCuda)).permute(reversed_dims(26));
  REQUIRE_THROWS_WITH(wide.contiguous(), Contains("at most 25 non-mergeable dims"));
}

TEST_CASE("cuda indexing errors name the op and both devices", "[cuda][indexing][errors]") {
  const Tensor x = random_of(DType::Float32, {3, 4}, 90), idx = zeros({2, 4}, DType::Int64);
  auto error_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  REQUIRE_THAT(error_of([&] { gather(gpu(x), 0, idx); }), Contains("gather: index int64[2, 4] is on cpu"));
  REQUIRE_THAT(error_of([&] { scatter_add(gpu(x), 0, gpu(idx), x); }), Contains("scatter_add_: src float32[3, 4]"));
  REQUIRE_THAT(error_of([&] { index_select(x, 0, gpu(idx.select(1, 0))); }), Contains("index_select: index"));
  REQUIRE_THAT(error_of([&] { x.index({gpu(idx.select(1, 0))}); }),
               Contains("index tensors must be on the CPU or on the indexed tensor's device"));
  REQUIRE_THAT(error_of([&] {
                 gather(gpu(x), 0, gpu(full({2, 4}, 3.0, DType::Int64)));
               }),
               Contains("gather: index 3 is out of bounds for dimension 0 with size 3"));
  REQUIRE_THAT(error_of([&] {
                 gpu(x).index({gpu(from_vector<int64_t>({0, -4}))});
               }),
               Contains("index: index -4 is out of bounds for dimension 0 with size 3"));
}

namespace {

using V = std::vector<Variable>;
using DeviceFn = std::function<Variable(const V&, Device)>;

// f on CPU leaves and on CUDA copies (index tensors moved by f to the device it is
// given), one cotangent backpropagated through both: outputs and gradients compared.
void require_same_grads(const DeviceFn& f, const std::vector<Tensor>& inputs, bool exact = true) {
  V on_cpu, on_gpu;
  for (const Tensor& t : inputs) {
    on_cpu.emplace_back(t, true);
    on_gpu.emplace_back(gpu(t), true);
  }
  const Variable yc = f(on_cpu, Device::cpu()), yg = f(on_gpu, kCuda);
  Generator gen(99);
  const Tensor cot = randn(yc.data().shape(), gen, yc.data().dtype());
  yc.backward(cot);
  yg.backward(gpu(cot));
  auto compare = [&](const Tensor& g, const Tensor& c) {
    if (exact) return require_identical(g, c);
    REQUIRE(allclose(g.to(Device::cpu()), c, 1e-5, 1e-6));
  };
  {
    INFO("output");
    compare(yg.data(), yc.data());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    compare(on_gpu[i].grad(), on_cpu[i].grad());
  }
}

}  // namespace

TEST_CASE("cuda gradients of the indexing ops match the CPU", "[cuda][indexing][grad]") {
  const Tensor x = random_of(DType::Float32, {6, 5000}, 100), x3 = random_of(DType::Float32, {8, 9, 60}, 101);
  const Tensor rows = random_index(6, {40}, 102), cols = random_index(5000, {3000}, 103);
  const Tensor gidx = random_index(6, {9, 5000}, 104);
  const Tensor i0 = random_index(8, {70}, 105), i2 = random_index(60, {70}, 106);
  const Tensor across = affine_index({6, 3000}, 1, 7, 5000);  // no repeated targets
  require_same_grads([&](const V& v, Device d) { return index_select(v[0], 0, rows.to(d)); }, {x});
  require_same_grads([&](const V& v, Device d) { return index_select(v[0], 1, cols.to(d)); }, {x});
  require_same_grads([&](const V& v, Device d) { return gather(v[0], 0, gidx.to(d)); }, {x});
  require_same_grads([&](const V& v, Device d) { return index_add(v[0], 1, cols.to(d), v[1]); },
                     {x, random_of(DType::Float32, {6, 3000}, 107)});
  require_same_grads([&](const V& v, Device d) { return scatter(v[0], 1, across.to(d), v[1]); },
                     {x, random_of(DType::Float32, {7, 3100}, 108)});
  require_same_grads([&](const V& v, Device d) { return scatter_add(v[0], 0, gidx.to(d), v[1]); },
                     {x, random_of(DType::Float32, {9, 5000}, 109)});
  require_same_grads([&](const V& v, Device d) { return v[0].index(on(d, {i0, Slice(), i2})); }, {x3});
  for (bool acc : {false, true})
    require_same_grads(
        [&](const V& v, Device d) {
          return index_put(v[0], on(d, {i0, Slice(), i2}), v[1], acc);
        },
        {x3, random_of(DType::Float32, {70, 9}, 110)});
  require_same_grads([&](const V& v, Device) { return flip(v[0], {0, 2}); }, {x3});
  require_same_grads([&](const V& v, Device) { return pad(v[0], {5, 7, 3, 2}, PadMode::Reflect); }, {x3});
  require_same_grads([&](const V& v, Device) { return pad(v[0], {5, 7, 3, 2}, PadMode::Replicate); }, {x3});
  const Tensor mask = random_of(DType::Bool, {8, 9, 60}, 111);
  require_same_grads([&](const V& v, Device d) { return masked_fill(v[0], mask.to(d), 2.0); }, {x3});
  // x broadcast by the mask: its gradient sums over the broadcast dim (a reduction).
  require_same_grads([&](const V& v, Device d) { return masked_fill(v[0], mask.to(d), 2.0); },
                     {random_of(DType::Float32, {9, 60}, 112)}, /*exact=*/false);
}
