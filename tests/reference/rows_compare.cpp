// Rows: comparisons and the operator overloads (tensor/ops/elementwise.h, autograd/ops/compare.h,
// autograd/ops/elementwise.h). Operators share their function's samples and may name it in messages.
#include "sweep.h"

namespace ddl::sweep {
namespace {

// Args "scalar" as the right operand, or as the left one with "left".
#define DDL_SWEEP_OPERATOR(OP)                                                      \
  [](const auto& in, const json& a) {                                               \
    if (!a.contains("scalar")) return in[0] OP in[1];                               \
    return flag(a, "left") ? f64(a, "scalar") OP in[0] : in[0] OP f64(a, "scalar"); \
  }
#define DDL_SWEEP_CMP(op) \
  [](const auto& in, const json& a) { return a.contains("scalar") ? op(in[0], f64(a, "scalar")) : op(in[0], in[1]); }

// Python's infix operator, so a scalar on the left takes the reflected path as in C++; the scalar is the Python
// number ddl reads the double as (PYNUM).
const char* kOperatorTorch =
    "lambda x, y=None, scalar=None, left=False: (PYNUM(scalar) OP x if left else x OP PYNUM(scalar)) if y is None "
    "else x OP y";

std::string torch_operator(const std::string& py) {
  std::string s = kOperatorTorch;
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "OP") == 0) {
      out += py;
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Sample> operator_samples() {
  std::vector<Sample> v;
  uint64_t s = 1200;
  for (DType t :
       {DType::Float32, DType::Float64, DType::Int64, DType::Bool, DType::Float16, DType::Int8, DType::Int16}) {
    const std::string n = short_name(t);
    v.push_back({"tensor " + n, {make(t, {3, 4}, s++), make(t, {3, 4}, s++)}});
    v.push_back({"scalar right " + n, {make(t, {3, 4}, s++)}, {{"scalar", 1.5}}});
    v.push_back({"scalar left " + n, {make(t, {3, 4}, s++)}, {{"scalar", 1.5}, {"left", true}}});
  }
  v.push_back({"broadcast f32", {make(DType::Float32, {3, 1}, s++), make(DType::Float32, {4}, s++)}});
  v.push_back({"mixed i64 f32", {make(DType::Int64, {3}, s++), make(DType::Float32, {3}, s++)}});
  v.push_back({"special f64", {special(DType::Float64), special(DType::Float64)}});
  v.push_back({"scalar int i32", {make(DType::Int32, {3}, s++)}, {{"scalar", 2.0}}});
  v.push_back({"bad broadcast", {make(DType::Float32, {3}, s++), make(DType::Float32, {2}, s++)}});
  return v;
}

std::vector<Sample> compare_samples() {
  std::vector<Sample> v = binary_samples({}, true);
  v.push_back({"ties f32", {of(DType::Float32, {4}, {1, 2, 3, 4}), of(DType::Float32, {4}, {1, 3, 3, 0})}});
  v.push_back({"scalar nan", {of(DType::Float32, {2}, {1, 2})}, {{"scalar", 2.0}}});
  return v;
}

}  // namespace

void add_compare_rows(std::vector<Row>& rows) {
  const json sz = {{"signed_zero", true}};
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    const std::string name = op;
    const std::string py = "lambda x, y=None, scalar=None: torch." + name + "(x, y if scalar is None else scalar)";
    Row r;
    if (name == "eq") r = both(name, py, DDL_SWEEP_CMP(eq), {}, compare_samples());
    if (name == "ne") r = both(name, py, DDL_SWEEP_CMP(ne), {}, compare_samples());
    if (name == "lt") r = both(name, py, DDL_SWEEP_CMP(lt), {}, compare_samples());
    if (name == "le") r = both(name, py, DDL_SWEEP_CMP(le), {}, compare_samples());
    if (name == "gt") r = both(name, py, DDL_SWEEP_CMP(gt), {}, compare_samples());
    if (name == "ge") r = both(name, py, DDL_SWEEP_CMP(ge), {}, compare_samples());
    rows.push_back(std::move(r));
  }
  const std::vector<bool> d2 = {true, true};
  // Arithmetic operators: Tensor and Variable; unary minus when there is one input and no scalar.
  rows.push_back(both("operator+", torch_operator("+"), DDL_SWEEP_OPERATOR(+), d2, operator_samples(), true,
                      {{"aliases", {"add"}}}));
  rows.push_back(both("operator*", torch_operator("*"), DDL_SWEEP_OPERATOR(*), d2, operator_samples(), true,
                      {{"aliases", {"mul"}}}));
  {
    std::vector<Sample> s = operator_samples();
    s.push_back({"unary f32", {make(DType::Float32, {3, 4}, 1290)}, {{"unary", true}}});
    s.push_back({"unary special f64", {special(DType::Float64)}, {{"unary", true}}});
    s.push_back({"unary bool", {make(DType::Bool, {3}, 1291)}, {{"unary", true}}});
    s.push_back({"unary u8", {make(DType::UInt8, {3}, 1292)}, {{"unary", true}}});
    rows.push_back(
        both("operator-",
             "lambda x, y=None, scalar=None, left=False, unary=False: -x if unary else ((PYNUM(scalar) - x if left "
             "else x - PYNUM(scalar)) if y is None else x - y)",
             [](const auto& in, const json& a) {
               if (flag(a, "unary")) return -in[0];
               if (!a.contains("scalar")) return in[0] - in[1];
               return flag(a, "left") ? f64(a, "scalar") - in[0] : in[0] - f64(a, "scalar");
             },
             d2, s, true, {{"aliases", {"sub", "neg", "rsub"}}, {"signed_zero", true}}));
  }
  rows.push_back(both("operator/", torch_operator("/"), DDL_SWEEP_OPERATOR(/), d2, operator_samples(), true,
                      {{"aliases", {"div", "mul"}}}));
  // Comparison operators exist for Variables only.
  const std::vector<std::pair<std::string, std::string>> cmp = {{"==", "eq"}, {"!=", "ne"}, {"<", "lt"},
                                                                {"<=", "le"}, {">", "gt"},  {">=", "ge"}};
  for (const auto& [sym, fn] : cmp) {
    const std::string torch = torch_operator(sym);
    const json m = {{"aliases", {fn}}};
    const std::string name = "operator" + sym;
    if (sym == "==") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(==), {}, operator_samples(), false, m));
    if (sym == "!=") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(!=), {}, operator_samples(), false, m));
    if (sym == "<") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(<), {}, operator_samples(), false, m));
    if (sym == "<=") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(<=), {}, operator_samples(), false, m));
    if (sym == ">") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(>), {}, operator_samples(), false, m));
    if (sym == ">=") rows.push_back(var_only(name, torch, DDL_SWEEP_OPERATOR(>=), {}, operator_samples(), false, m));
  }
  (void)sz;
}

}  // namespace ddl::sweep
