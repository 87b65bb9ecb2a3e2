// The sweep's sample generators: shapes, layouts, dtypes, special values and argument edge cases shared by
// the rows. Values are drawn here, in plain C++; the runner turns them into tensors inside each case's child.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "sweep.h"

namespace ddl::sweep {

const char* short_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "f32";
    case DType::Float64:
      return "f64";
    case DType::Float16:
      return "f16";
    case DType::BFloat16:
      return "bf16";
    case DType::Int64:
      return "i64";
    case DType::Int32:
      return "i32";
    case DType::UInt8:
      return "u8";
    case DType::Int8:
      return "i8";
    case DType::Int16:
      return "i16";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

Reduction reduction(const json& a) {
  const std::string r = a.contains("reduction") ? a["reduction"].get<std::string>() : "mean";
  return r == "none" ? Reduction::None : r == "sum" ? Reduction::Sum : Reduction::Mean;
}

Input make(DType dtype, std::vector<int64_t> shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed * 7919 + 17);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Input in{dtype, std::move(shape), {}};
  in.values.resize(n);
  for (double& v : in.values) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    if (is_floating(dtype)) {
      v = lo + (hi - lo) * u;
    } else if (dtype == DType::Bool) {
      v = u < 0.5 ? 0.0 : 1.0;
    } else if (dtype == DType::UInt8) {
      v = std::floor(u * 10);
    } else {
      v = std::floor(u * 11) - 5;
    }
  }
  return in;
}

Input of(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  return Input{dtype, std::move(shape), std::move(values)};
}

Input with_layout(Input in, const std::string& layout, int64_t expand_dim) {
  in.layout = layout;
  in.expand_dim = expand_dim;
  if (layout == "expanded") {  // make the values repeat along expand_dim
    const auto& s = in.shape;
    const int64_t d = expand_dim < 0 ? expand_dim + static_cast<int64_t>(s.size()) : expand_dim;
    int64_t inner = 1;
    for (size_t i = d + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t block = inner * s[d];
    for (size_t i = 0; i < in.values.size(); ++i) {
      const int64_t outer = i / block, rest = i % inner;
      in.values[i] = in.values[outer * block + rest];
    }
  }
  return in;
}

Input special(DType dtype, std::vector<int64_t> shape, int rotate) {
  const double inf = std::numeric_limits<double>::infinity();
  const double huge = dtype == DType::Float64 ? 1e300 : dtype == DType::Float16 ? 6e4 : 1e38;
  const double tiny = dtype == DType::Float64 ? 1e-300 : dtype == DType::Float16 ? 1e-7 : 1e-38;
  std::vector<double> v = {std::nan(""), inf, -inf, -0.0, 0.0,   huge,   -huge,  tiny,
                           -tiny,        1.0, -0.5, 2.5,  100.0, -100.0, 1000.0, -1000.0};
  std::rotate(v.begin(), v.begin() + rotate % static_cast<int>(v.size()), v.end());
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  v.resize(n, 0.25);
  return Input{dtype, std::move(shape), std::move(v)};
}

void add_all(std::vector<Sample>& v, const std::vector<Sample>& s, const json& args) {
  for (Sample x : s) {
    for (auto& [k, val] : args.items()) {
      x.args[k] = val;
      x.tag += " " + k + "=" + val.dump();  // tags stay unique within a row
    }
    v.push_back(std::move(x));
  }
}

std::vector<Sample> unary_samples(const Domain& d, const std::vector<DType>& dtypes) {
  std::vector<Sample> v;
  uint64_t seed = 1;
  for (DType t : dtypes) {
    const std::string n = short_name(t);
    v.push_back({"3x4 " + n, {make(t, {3, 4}, seed++, d.lo, d.hi)}});
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"0-d " + n, {make(t, {}, seed++, d.lo, d.hi)}});
    v.push_back({"1-d " + n, {make(t, {7}, seed++, d.lo, d.hi)}});
    v.push_back({"3-d " + n, {make(t, {2, 3, 4}, seed++, d.lo, d.hi)}});
    v.push_back({"empty " + n, {make(t, {0, 3}, seed++, d.lo, d.hi)}});
    v.push_back({"transposed " + n, {with_layout(make(t, {4, 3}, seed++, d.lo, d.hi), "transposed")}});
    v.push_back({"stepped " + n, {with_layout(make(t, {3, 5}, seed++, d.lo, d.hi), "stepped")}});
    v.push_back({"expanded " + n, {with_layout(make(t, {3, 4}, seed++, d.lo, d.hi), "expanded", 0)}});
    if (d.specials) v.push_back({"special " + n, {special(t)}});
  }
  for (DType t : {DType::Int64, DType::Float16, DType::BFloat16}) {
    v.push_back({"0-d " + std::string(short_name(t)), {make(t, {}, seed++, d.lo, d.hi)}});
    v.push_back(
        {"transposed " + std::string(short_name(t)), {with_layout(make(t, {4, 3}, seed++, d.lo, d.hi), "transposed")}});
  }
  if (std::find(dtypes.begin(), dtypes.end(), DType::Int8) != dtypes.end()) {
    // The extremes of the narrow integers, where neg and abs wrap as in PyTorch (-(-128) is -128).
    v.push_back({"extremes i8", {of(DType::Int8, {4}, {-128, 127, -1, 0})}});
    v.push_back({"extremes i16", {of(DType::Int16, {4}, {-32768, 32767, -1, 0})}});
  }
  if (d.specials) {
    // Large magnitudes where exp, x * x or 1 / x overflow part way through a formula.
    v.push_back(
        {"large f32",
         {of(DType::Float32, {12}, {3e38, -3e38, 1e20, -1e20, 1e5, -1e5, 88.5, -88.5, 89.0, -89.0, 104.0, -104.0})}});
    v.push_back({"large f64",
                 {of(DType::Float64, {12},
                     {1.7e308, -1.7e308, 1e160, -1e160, 1e5, -1e5, 709.0, -709.0, 710.0, -710.0, 746.0, -746.0})}});
    v.push_back({"special f16", {special(DType::Float16)}});
    v.push_back({"special bf16", {special(DType::BFloat16)}});
  }
  return v;
}

std::vector<Sample> binary_samples(const Domain& d, bool scalar, const std::vector<DType>& dtypes) {
  std::vector<Sample> v;
  uint64_t seed = 100;
  auto mk = [&](DType t, std::vector<int64_t> s) { return make(t, std::move(s), seed++, d.lo, d.hi); };
  for (DType t : dtypes) {
    const std::string n = short_name(t);
    v.push_back({"same " + n, {mk(t, {3, 4}), mk(t, {3, 4})}});
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"broadcast row " + n, {mk(t, {3, 4}), mk(t, {4})}});
    v.push_back({"broadcast both " + n, {mk(t, {3, 1}), mk(t, {1, 4})}});
    v.push_back({"broadcast left " + n, {mk(t, {4}), mk(t, {2, 3, 4})}});
    v.push_back({"0-d right " + n, {mk(t, {3, 4}), mk(t, {})}});
    v.push_back({"0-d left " + n, {mk(t, {}), mk(t, {3, 4})}});
    v.push_back({"0-d both " + n, {mk(t, {}), mk(t, {})}});
    v.push_back({"empty " + n, {mk(t, {0, 4}), mk(t, {4})}});
    v.push_back({"empty broadcast " + n, {mk(t, {0, 1}), mk(t, {1, 3})}});
    v.push_back({"transposed " + n, {with_layout(mk(t, {4, 3}), "transposed"), mk(t, {4, 3})}});
    v.push_back({"stepped " + n, {mk(t, {3, 5}), with_layout(mk(t, {3, 5}), "stepped")}});
    v.push_back(
        {"expanded " + n, {with_layout(mk(t, {3, 4}), "expanded", 0), with_layout(mk(t, {3, 4}), "expanded", 1)}});
    v.push_back({"special " + n, {special(t), special(t, {16}, 5)}});
    v.push_back({"special same " + n, {special(t), special(t)}});
    v.push_back({"special x ordinary " + n, {special(t), mk(t, {16})}});
    v.push_back({"ordinary x special " + n, {mk(t, {16}), special(t)}});
  }
  v.push_back({"bad broadcast f32", {mk(DType::Float32, {3, 4}), mk(DType::Float32, {3})}});
  // Mixed dtypes: type promotion, including 0-d operands (which do not promote across categories in PyTorch).
  const std::vector<std::pair<DType, DType>> mixed = {
      {DType::Float32, DType::Float64}, {DType::Int64, DType::Float32},    {DType::Int32, DType::Int64},
      {DType::UInt8, DType::Int32},     {DType::Bool, DType::Int64},       {DType::Bool, DType::Float32},
      {DType::Float16, DType::Float32}, {DType::BFloat16, DType::Float16}, {DType::UInt8, DType::Bool},
      {DType::Int64, DType::Float16},   {DType::Int8, DType::UInt8},       {DType::Int16, DType::Int8},
      {DType::UInt8, DType::Int16},     {DType::Int8, DType::Bool},        {DType::Int16, DType::Int32},
      {DType::Int8, DType::Float16},    {DType::Int16, DType::BFloat16}};
  for (auto [a, b] : mixed) {
    const std::string n = std::string(short_name(a)) + "+" + short_name(b);
    v.push_back({"mixed " + n, {mk(a, {3, 4}), mk(b, {3, 4})}});
    v.push_back({"mixed 0-d right " + n, {mk(a, {3, 4}), mk(b, {})}});
  }
  if (std::find(dtypes.begin(), dtypes.end(), DType::Int8) != dtypes.end()) {
    // Results beyond the narrow integers' range wrap (two's complement) in PyTorch.
    v.push_back({"wrap i8", {of(DType::Int8, {4}, {100, 127, -128, -100}), of(DType::Int8, {4}, {100, 2, -1, 27})}});
    v.push_back({"wrap i16",
                 {of(DType::Int16, {4}, {30000, 32767, -32768, -300}), of(DType::Int16, {4}, {30000, 2, -1, 300})}});
  }
  if (scalar) {
    for (DType t : dtypes) {
      const std::string n = short_name(t);
      v.push_back({"scalar 2.5 " + n, {mk(t, {3, 4})}, {{"scalar", 2.5}}});
      v.push_back({"scalar 3 " + n, {mk(t, {3, 4})}, {{"scalar", 3.0}}});
    }
    v.push_back({"scalar 0-d f32", {mk(DType::Float32, {})}, {{"scalar", -1.5}}});
    v.push_back({"scalar empty f32", {mk(DType::Float32, {0})}, {{"scalar", -1.5}}});
    v.push_back({"scalar special f32", {special(DType::Float32)}, {{"scalar", 0.5}}});
    v.push_back({"scalar special f64", {special(DType::Float64)}, {{"scalar", -0.0}}});
    v.push_back({"scalar 0 f32", {mk(DType::Float32, {3})}, {{"scalar", 0.0}}});
    v.push_back({"scalar huge f32", {mk(DType::Float32, {3})}, {{"scalar", 1e38}}});
  }
  return v;
}

std::vector<Sample> reduce_samples(const std::vector<DType>& dtypes, bool specials) {
  std::vector<Sample> v;
  uint64_t seed = 300;
  auto mk = [&](DType t, std::vector<int64_t> s) { return make(t, std::move(s), seed++); };
  for (DType t : dtypes) {
    const std::string n = short_name(t);
    v.push_back({"all " + n, {mk(t, {3, 4})}, {{"dim", json::array()}, {"keepdim", false}}});
    v.push_back({"dim1 " + n, {mk(t, {3, 4})}, {{"dim", {1}}, {"keepdim", false}}});
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"all keepdim " + n, {mk(t, {3, 4})}, {{"dim", json::array()}, {"keepdim", true}}});
    v.push_back({"dim0 keepdim " + n, {mk(t, {3, 4})}, {{"dim", {0}}, {"keepdim", true}}});
    v.push_back({"dim-1 3-d " + n, {mk(t, {2, 3, 4})}, {{"dim", {-1}}, {"keepdim", false}}});
    v.push_back({"dims 0,2 " + n, {mk(t, {2, 3, 4})}, {{"dim", {0, 2}}, {"keepdim", false}}});
    v.push_back({"dims -1,0 keepdim " + n, {mk(t, {2, 3, 4})}, {{"dim", {-1, 0}}, {"keepdim", true}}});
    v.push_back({"0-d all " + n, {mk(t, {})}, {{"dim", json::array()}, {"keepdim", false}}});
    v.push_back({"0-d dim0 " + n, {mk(t, {})}, {{"dim", {0}}, {"keepdim", false}}});
    v.push_back({"0-d dim-1 keepdim " + n, {mk(t, {})}, {{"dim", {-1}}, {"keepdim", true}}});
    v.push_back({"empty all " + n, {mk(t, {0, 3})}, {{"dim", json::array()}, {"keepdim", false}}});
    v.push_back({"empty dim1 " + n, {mk(t, {0, 3})}, {{"dim", {1}}, {"keepdim", false}}});
    v.push_back({"empty dim0 " + n, {mk(t, {0, 3})}, {{"dim", {0}}, {"keepdim", false}}});
    v.push_back({"transposed " + n, {with_layout(mk(t, {4, 3}), "transposed")}, {{"dim", {1}}, {"keepdim", false}}});
    v.push_back({"stepped " + n, {with_layout(mk(t, {3, 5}), "stepped")}, {{"dim", {0}}, {"keepdim", false}}});
    v.push_back({"expanded " + n, {with_layout(mk(t, {3, 4}), "expanded", 0)}, {{"dim", {0}}, {"keepdim", false}}});
    v.push_back({"dim out of range " + n, {mk(t, {3, 4})}, {{"dim", {2}}, {"keepdim", false}}});
    v.push_back({"dim -3 out of range " + n, {mk(t, {3, 4})}, {{"dim", {-3}}, {"keepdim", false}}});
    v.push_back({"repeated dim " + n, {mk(t, {3, 4})}, {{"dim", {1, -1}}, {"keepdim", false}}});
    if (specials) v.push_back({"special " + n, {special(t, {4, 4})}, {{"dim", {1}}, {"keepdim", false}}});
  }
  // Large magnitudes with a small spread (cancellation), and integers that overflow their own dtype.
  std::vector<double> big(64);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 10000.0 + (i % 7) * 0.125;
  v.push_back({"large mean f32", {of(DType::Float32, {64}, big)}, {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back(
      {"mean 1e6 rows f32", {make(DType::Float32, {4, 256}, 79, 1e6, 1e6 + 2)}, {{"dim", {1}}, {"keepdim", false}}});
  v.push_back({"mean 1e6 all f32",
               {make(DType::Float32, {4, 256}, 80, 1e6, 1e6 + 2)},
               {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back({"mean 1e9 f64", {make(DType::Float64, {1000}, 81, 1e9, 1e9 + 1)}, {{"dim", {0}}, {"keepdim", false}}});
  v.push_back(
      {"int32 overflow", {of(DType::Int32, {4}, {2e9, 2e9, 2e9, 1})}, {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back(
      {"uint8 overflow", {of(DType::UInt8, {4}, {250, 250, 250, 3})}, {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back(
      {"int8 overflow", {of(DType::Int8, {4}, {120, 120, -128, 127})}, {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back({"int16 overflow",
               {of(DType::Int16, {4}, {32000, 32000, -32768, 32767})},
               {{"dim", json::array()}, {"keepdim", false}}});
  v.push_back({"bool count", {of(DType::Bool, {5}, {1, 1, 0, 1, 1})}, {{"dim", json::array()}, {"keepdim", false}}});
  if (specials) {
    v.push_back({"special f16", {special(DType::Float16, {4, 4})}, {{"dim", {1}}, {"keepdim", false}}});
    v.push_back(
        {"long f16", {make(DType::Float16, {2000}, 77, 0.0, 1.0)}, {{"dim", json::array()}, {"keepdim", false}}});
    v.push_back(
        {"long bf16", {make(DType::BFloat16, {2000}, 78, 0.0, 1.0)}, {{"dim", json::array()}, {"keepdim", false}}});
  }
  return v;
}

std::vector<Sample> dim_samples(const std::vector<DType>& dtypes, bool keepdim, bool specials, bool allow_empty) {
  std::vector<Sample> v;
  uint64_t seed = 500;
  auto mk = [&](DType t, std::vector<int64_t> s) { return make(t, std::move(s), seed++); };
  auto args = [&](int64_t dim, bool kd) {
    json a = {{"dim", dim}};
    if (keepdim) a["keepdim"] = kd;
    return a;
  };
  for (DType t : dtypes) v.push_back({std::string("dim1 ") + short_name(t), {mk(t, {3, 4})}, args(1, false)});
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"dim0 " + n, {mk(t, {3, 4})}, args(0, true)});
    v.push_back({"dim-1 3-d " + n, {mk(t, {2, 3, 4})}, args(-1, false)});
    v.push_back({"dim1 3-d " + n, {mk(t, {2, 3, 4})}, args(1, true)});
    v.push_back({"1-d " + n, {mk(t, {6})}, args(0, false)});
    v.push_back({"0-d dim0 " + n, {mk(t, {})}, args(0, false)});
    v.push_back({"0-d dim-1 " + n, {mk(t, {})}, args(-1, true)});
    v.push_back({"0-d dim1 " + n, {mk(t, {})}, args(1, false)});
    if (allow_empty) v.push_back({"empty other dim " + n, {mk(t, {0, 3})}, args(1, false)});
    v.push_back({"transposed " + n, {with_layout(mk(t, {4, 3}), "transposed")}, args(1, false)});
    v.push_back({"stepped " + n, {with_layout(mk(t, {3, 5}), "stepped")}, args(-1, false)});
    v.push_back({"expanded " + n, {with_layout(mk(t, {3, 4}), "expanded", 0)}, args(0, false)});
    v.push_back({"dim out of range " + n, {mk(t, {3, 4})}, args(2, false)});
    v.push_back({"dim -3 out of range " + n, {mk(t, {3, 4})}, args(-3, false)});
    if (specials) v.push_back({"special " + n, {special(t, {4, 4})}, args(1, false)});
  }
  v.push_back({"ties f32", {of(DType::Float32, {2, 4}, {1, 3, 3, 0, 2, 2, 2, 2})}, args(1, false)});
  v.push_back({"wide f64", {make(DType::Float64, {3, 300}, seed++, -40, 40)}, args(1, false)});
  v.push_back({"wide f32", {make(DType::Float32, {3, 300}, seed++, -40, 40)}, args(1, false)});
  v.push_back({"offset f64", {make(DType::Float64, {2, 50}, seed++, 1000, 1010)}, args(-1, false)});
  v.push_back({"spread 1000 f64", {make(DType::Float64, {2, 50}, seed++, -500, 500)}, args(1, false)});
  v.push_back({"spread 200 f32", {make(DType::Float32, {2, 50}, seed++, -100, 100)}, args(1, false)});
  v.push_back({"one dominant f64", {of(DType::Float64, {1, 4}, {0, -30, -30, -30})}, args(1, false)});
  if (specials) v.push_back({"special f16", {special(DType::Float16, {4, 4})}, args(1, false)});
  return v;
}

}  // namespace ddl::sweep
