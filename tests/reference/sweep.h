// The reference sweep's table: one Row per public op, each with its PyTorch expression and its samples
// (docs/reference_sweep.md). Rows only describe; runner.cpp evaluates them in ddl and compare.py in PyTorch.
// Modelled on PyTorch's OpInfo (torch/testing/_internal/common_methods_invocations.py).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/functional.h>
#include <ddl/tensor/ops.h>

namespace ddl::sweep {

using json = nlohmann::json;

// A pair argument k of a row (a list of one or two ints), {d, d} when absent.
inline std::array<int64_t, 2> pair2(const json& a, const char* k, int64_t d) {
  if (!a.contains(k)) return {d, d};
  const auto v = a[k].get<std::vector<int64_t>>();
  return {v[0], v.size() > 1 ? v[1] : v[0]};
}

// One input: its logical values (row-major), dtype, shape and memory layout. Layouts, reproduced by
// compare.py: "contiguous"; "transposed" = v.transpose(-1,-2).contiguous().transpose(-1,-2); "stepped" = a
// buffer twice as long in the last dim, sliced [..., ::2]; "expanded" = v.select(expand_dim, 0) unsqueezed
// and expanded back to the shape (values must already repeat along expand_dim).
struct Input {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::string layout = "contiguous";
  int64_t expand_dim = 0;
};

struct Sample {
  std::string tag;  // what the sample exercises, e.g. "broadcast f32", "0-d", "special f64"
  std::vector<Input> inputs;
  json args = json::object();
};

using Outs = std::vector<Variable>;
using VarFn = std::function<Outs(const std::vector<Variable>&, const json&)>;
using TenFn = std::function<Outs(const std::vector<Tensor>&, const json&)>;

struct Row {
  std::string name;              // the public name the user calls (error messages must name it)
  std::string torch;             // a Python lambda over the inputs and the args' names
  VarFn var;                     // the Variable overload (forward and gradients); may be empty
  TenFn ten;                     // the Tensor overload; may be empty
  std::vector<bool> diff;        // which inputs are differentiable (when floating)
  bool double_backward = false;  // ddl claims double backward
  std::vector<Sample> samples;
  json meta = json::object();  // for compare.py: "signed_zero", "values": false, "check", "aliases", ...
};

// Thrown by a row's call when an overload does not exist for a sample (e.g. class weights on the Tensor
// cross_entropy): the runner records the stage as skipped.
struct Skip {};

// --- outputs of any shape, as a list of Variables ------------------------------------------------------------
inline Outs outs(const Variable& v) { return {v}; }
inline Outs outs(const Tensor& t) { return {Variable(t)}; }
inline Outs outs(bool b) { return {Variable(scalar_tensor(b ? 1.0 : 0.0, DType::Bool))}; }
inline Outs outs(const ValuesIndices<Variable>& r) { return {r.values, Variable(r.indices)}; }
inline Outs outs(const ValuesIndices<Tensor>& r) { return {Variable(r.values), Variable(r.indices)}; }
inline Outs outs(const std::pair<Variable, Tensor>& r) { return {r.first, Variable(r.second)}; }
inline Outs outs(const std::pair<Tensor, Tensor>& r) { return {Variable(r.first), Variable(r.second)}; }
inline Outs outs(const LstmLayerResult& r) { return {r.output, r.h_n, r.c_n}; }
inline Outs outs(const GruLayerResult& r) { return {r.output, r.h_n}; }
inline Outs outs(const BatchNormResult& r) { return {Variable(r.y), Variable(r.save_mean), Variable(r.save_invstd)}; }
inline Outs outs(const std::vector<Variable>& v) { return v; }
inline Outs outs(const std::vector<Tensor>& v) {
  Outs o;
  for (const Tensor& t : v) o.emplace_back(t);
  return o;
}

// --- building rows -------------------------------------------------------------------------------------------
// `f` is a generic lambda `[](const auto& in, const json& a) { return op(in[0], ...); }`: both overloads.
template <typename F>
Row both(std::string name, std::string torch, F f, std::vector<bool> diff, std::vector<Sample> samples,
         bool double_backward = false, json meta = json::object()) {
  Row r{std::move(name),    std::move(torch), {}, {}, std::move(diff), double_backward,
        std::move(samples), std::move(meta)};
  r.var = [f](const std::vector<Variable>& in, const json& a) { return outs(f(in, a)); };
  r.ten = [f](const std::vector<Tensor>& in, const json& a) { return outs(f(in, a)); };
  return r;
}
// Only the Variable overload exists (autograd/ops).
template <typename F>
Row var_only(std::string name, std::string torch, F f, std::vector<bool> diff, std::vector<Sample> samples,
             bool double_backward = false, json meta = json::object()) {
  Row r{std::move(name),    std::move(torch), {}, {}, std::move(diff), double_backward,
        std::move(samples), std::move(meta)};
  r.var = [f](const std::vector<Variable>& in, const json& a) { return outs(f(in, a)); };
  return r;
}
// Only the Tensor overload exists (tensor/): no gradients.
template <typename F>
Row ten_only(std::string name, std::string torch, F f, std::vector<Sample> samples, json meta = json::object()) {
  Row r{std::move(name), std::move(torch), {}, {}, {}, false, std::move(samples), std::move(meta)};
  r.ten = [f](const std::vector<Tensor>& in, const json& a) { return outs(f(in, a)); };
  return r;
}

// --- argument helpers -----------------------------------------------------------------------------------------
inline std::vector<int64_t> ints(const json& a, const char* k) { return a.at(k).get<std::vector<int64_t>>(); }
inline int64_t i64(const json& a, const char* k, int64_t d = 0) { return a.contains(k) ? a[k].get<int64_t>() : d; }
// Non-finite numbers travel as the strings "inf", "-inf", "nan" (JSON has none); compare.py converts them too.
inline double f64(const json& a, const char* k, double d = 0) {
  if (!a.contains(k)) return d;
  return a[k].is_string() ? std::stod(a[k].get<std::string>()) : a[k].get<double>();
}
inline bool flag(const json& a, const char* k, bool d = false) { return a.contains(k) ? a[k].get<bool>() : d; }
inline Tensor in_t(const Tensor& t) { return t; }
inline Tensor in_t(const Variable& v) { return v.data(); }  // a non-differentiable input (indices, masks)
Reduction reduction(const json& a);

// --- sample generators (samples.cpp) --------------------------------------------------------------------------
// All ten dtypes; int8 and int16 last, so the samples drawn before them keep their seeds.
inline const std::vector<DType> kAllDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                              DType::Int64,   DType::Int32,   DType::UInt8,   DType::Bool,
                                              DType::Int8,    DType::Int16};
inline const std::vector<DType> kFloatDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

// Values of `shape` for `dtype`, drawn deterministically from `seed`: floats in [lo, hi), integers in a small
// range (non-negative for uint8), bools half true.
Input make(DType dtype, std::vector<int64_t> shape, uint64_t seed, double lo = -2.0, double hi = 2.0);
Input with_layout(Input in, const std::string& layout, int64_t expand_dim = 0);
// Special values for a floating dtype: NaN, +-inf, +-0, huge, tiny, ordinary ones and +-100, +-1000 (where
// exp overflows in float32 and float16), 16 in all, rotated left by `rotate` (pairs differ between operands).
Input special(DType dtype, std::vector<int64_t> shape = {16}, int rotate = 0);
Input of(DType dtype, std::vector<int64_t> shape, std::vector<double> values);
const char* short_name(DType t);

struct Domain {
  double lo = -2.0, hi = 2.0;
  bool specials = true;  // add the special-values samples
};
// One input: 0-d, 1-d, 2-d, 3-d, empty, the three non-contiguous layouts, every dtype, special values.
std::vector<Sample> unary_samples(const Domain& d = {}, const std::vector<DType>& dtypes = kAllDTypes);
// Two inputs: same shape, broadcast both ways, 0-d with n-d, empty, non-contiguous, every dtype, mixed dtypes,
// special values on both sides. With `scalar`, also samples whose second operand is args "scalar".
std::vector<Sample> binary_samples(const Domain& d = {}, bool scalar = false,
                                   const std::vector<DType>& dtypes = kAllDTypes);
// One input and a list of dims: all, one, several, negative, keepdim both ways, out of range, 0-d, empty.
std::vector<Sample> reduce_samples(const std::vector<DType>& dtypes = kAllDTypes, bool specials = true);
// One input and one "dim" (an integer, for softmax, cumsum, argmax, sort...), with keepdim when asked.
std::vector<Sample> dim_samples(const std::vector<DType>& dtypes, bool keepdim, bool specials = true,
                                bool allow_empty = true);
// Appends `s` to `v` with `args` merged into every sample's args.
void add_all(std::vector<Sample>& v, const std::vector<Sample>& s, const json& args = json::object());

// --- the table ---------------------------------------------------------------------------------------------------
void add_elementwise_rows(std::vector<Row>& rows);
void add_compare_rows(std::vector<Row>& rows);
void add_reduce_rows(std::vector<Row>& rows);
void add_shape_rows(std::vector<Row>& rows);
void add_index_rows(std::vector<Row>& rows);
void add_factory_rows(std::vector<Row>& rows);
void add_nn_rows(std::vector<Row>& rows);
void add_sequence_rows(std::vector<Row>& rows);
void add_conv_rows(std::vector<Row>& rows);
void add_loss_rows(std::vector<Row>& rows);
void add_loss2_rows(std::vector<Row>& rows);
void add_backward_rows(std::vector<Row>& rows);
void add_method_rows(std::vector<Row>& rows);
void add_activation_rows(std::vector<Row>& rows);
void add_math_rows(std::vector<Row>& rows);
void add_spelling_rows(std::vector<Row>& rows);
void add_reduce2_rows(std::vector<Row>& rows);
void add_linalg_rows(std::vector<Row>& rows);
void add_seq_models_rows(std::vector<Row>& rows);
void add_pool_nd_rows(std::vector<Row>& rows);
void add_layers_more_rows(std::vector<Row>& rows);
void add_rounding_rows(std::vector<Row>& rows);
std::vector<Row> all_rows();

}  // namespace ddl::sweep
