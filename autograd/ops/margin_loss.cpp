// The losses of margin_loss.h, each written as PyTorch 1.13 writes it (ATen's Loss.cpp,
// LossMultiMargin.cpp, LossMultiLabelMargin.cpp; torch/nn/functional.py), from differentiable
// ops, so the gradient is autograd's and double backward comes for free. Label-only
// targets become constant masks; nothing here has its own kernel.
#include <cmath>
#include <numbers>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/compare.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/margin_loss.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace {

Variable reduce(const Variable& loss, Reduction r) {
  return r == Reduction::None ? loss : r == Reduction::Sum ? sum(loss) : mean(loss);
}

Variable clamp_min0(const Variable& x) { return clamp(x, std::optional<double>(0.0), std::nullopt); }

Variable zeros_of(const Variable& x) { return Variable(zeros({}, TensorOptions(x.dtype(), x.device()))); }

void check_float(const Variable& x, const char* op, const char* what) {
  DDL_CHECK(x.defined(), op, ": ", what, " must be defined");
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a float ", what, ", got ", describe(x.data()));
}

// log σ(x) = min(x, 0) − log(1 + exp(−|x|)), finite for every finite x.
Variable log_sigmoid(const Variable& x) { return sub(minimum(x, zeros_of(x)), log(add(exp(neg(abs(x))), 1.0))); }

// ‖x1 − x2 + eps‖_p over the last dim (torch.pairwise_distance).
Variable pairwise_distance(const Variable& x1, const Variable& x2, double p, double eps) {
  const Variable d = add(sub(x1, x2), eps);
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  if (p == 2) return sqrt(sum(mul(d, d), {last}));
  if (p == 1) return sum(abs(d), {last});
  if (std::isinf(p)) return p > 0 ? amax(abs(d), {last}) : amin(abs(d), {last});
  if (p == 0) return Variable(sum(ne(d.data(), 0.0).to(d.dtype()), {last}));
  return pow(sum(pow(abs(d), p), {last}), 1.0 / p);
}

// The input as [N, C] (a [C] or 0-d input is one sample) and the target as int64 class indices.
Variable as_matrix(const Variable& x) { return x.dim() == 2 ? x : x.reshape({1, x.dim() == 0 ? 1 : x.numel()}); }

void check_classes(const Variable& x, const Tensor& y, const char* op) {
  check_float(x, op, "input");
  DDL_CHECK(y.defined() && y.dtype() == DType::Int64, op, ": expected an int64 target, got ",
            y.defined() ? describe(y) : std::string("an undefined tensor"));
  DDL_CHECK((x.dim() == 2 && x.size(1) != 0) || (x.dim() == 1 && x.size(0) != 0) || x.dim() == 0, op,
            ": expected a non-empty vector or a matrix [N, C] with C > 0, got input ", x.shape());
  DDL_CHECK(x.dim() < 2 || x.size(0) != 0, op, ": the batch is empty (input ", x.shape(),
            "); PyTorch 1.13 returns an unspecified value here");
}

// Per-sample losses [N] back to the input's batch form: [] for a [C] or 0-d input.
Variable per_sample(const Variable& l, const Variable& x) { return x.dim() < 2 ? l.reshape({}) : l; }

}  // namespace

Variable margin_ranking_loss(const Variable& x1, const Variable& x2, const Variable& y, double margin,
                             Reduction reduction) {
  check_float(x1, "margin_ranking_loss", "input1");
  check_float(x2, "margin_ranking_loss", "input2");
  check_float(y, "margin_ranking_loss", "target");
  DDL_CHECK(x1.dim() == x2.dim() && x1.dim() == y.dim(),
            "margin_ranking_loss: all inputs must have the same number of dims, got input1 ", x1.shape(), ", input2 ",
            x2.shape(), " and target ", y.shape());
  return reduce(clamp_min0(add(mul(neg(y), sub(x1, x2)), margin)), reduction);
}

Variable hinge_embedding_loss(const Variable& x, const Tensor& y, double margin, Reduction reduction) {
  check_float(x, "hinge_embedding_loss", "input");
  DDL_CHECK(y.defined(), "hinge_embedding_loss: target must be defined");
  const Variable z = zeros_of(x);
  const Variable m = where(ne(y, 1.0), clamp_min0(rsub(x, margin)), z);
  return reduce(add(m, where(ne(y, -1.0), x, z)), reduction);
}

Variable soft_margin_loss(const Variable& x, const Tensor& y, Reduction reduction) {
  check_float(x, "soft_margin_loss", "input");
  DDL_CHECK(y.defined(), "soft_margin_loss: target must be defined");
  return reduce(log(add(exp(neg(mul(x, Variable(y)))), 1.0)), reduction);
}

Variable multilabel_soft_margin_loss(const Variable& x, const Variable& y, const Tensor& weight, Reduction reduction) {
  check_float(x, "multilabel_soft_margin_loss", "input");
  check_float(y, "multilabel_soft_margin_loss", "target");
  DDL_CHECK(x.dim() > 0, "multilabel_soft_margin_loss: expected an input [C] or [N, C], got a 0-d tensor");
  Variable l = neg(add(mul(y, log_sigmoid(x)), mul(rsub(y, 1.0), log_sigmoid(neg(x)))));
  if (weight.defined()) l = mul(l, Variable(weight));
  const int64_t c = x.size(-1);
  l = div(sum(l, {x.dim() - 1}), static_cast<double>(c));
  return reduce(l, reduction);
}

Variable multi_margin_loss(const Variable& x, const Tensor& y, int64_t p, double margin, const Tensor& weight,
                           Reduction reduction) {
  DDL_CHECK(p == 1 || p == 2, "multi_margin_loss: only p == 1 and p == 2 are supported, got ", p);
  check_classes(x, y, "multi_margin_loss");
  const Variable xm = as_matrix(x);
  const int64_t n = xm.size(0), c = xm.size(1);
  DDL_CHECK((x.dim() == 2 && y.dim() == 1 && y.size(0) == n) || (x.dim() < 2 && y.numel() == 1 && y.dim() <= 1),
            "multi_margin_loss: target ", y.shape(), " does not match input ", x.shape(), " (expected [N])");
  const Tensor t = y.reshape({n, 1});
  DDL_CHECK(t.numel() == 0 || (amin(t).item() >= 0 && amax(t).item() < c), "multi_margin_loss: target out of range ",
            "[0, ", c, ")");
  DDL_CHECK(!weight.defined() || (weight.dim() <= 1 && weight.numel() == c), "multi_margin_loss: weight ",
            weight.defined() ? weight.shape() : Shape{}, " must have C = ", c, " elements");
  // z[i, j] = margin − x[i, y_i] + x[i, j], counted for j ≠ y_i where z > 0 (relu's slope is 0 at 0).
  Variable h = clamp_min0(add(rsub(gather(xm, 1, t), margin), xm));
  if (p == 2) h = mul(h, h);
  if (weight.defined())
    h = mul(h, Variable(gather(weight.reshape({c}).to(x.dtype()), 0, y.reshape({n})).reshape({n, 1})));
  const Tensor is_target = eq(arange(c).to(x.device()).reshape({1, c}), t);
  h = where(is_target, zeros_of(h), h);
  return reduce(per_sample(div(sum(h, {1}), static_cast<double>(c)), x), reduction);
}

Variable multilabel_margin_loss(const Variable& x, const Tensor& y, Reduction reduction) {
  check_classes(x, y, "multilabel_margin_loss");
  DDL_CHECK(y.shape() == x.shape() || (x.dim() == 0 && y.numel() == 1), "multilabel_margin_loss: target ", y.shape(),
            " must have the input's shape ", x.shape());
  const Variable xm = as_matrix(x);
  const int64_t n = xm.size(0), c = xm.size(1);
  const Tensor t = y.reshape({n, c}).contiguous().to(DType::Int64);
  DDL_CHECK(t.numel() == 0 || (amin(t).item() >= -1 && amax(t).item() < c),
            "multilabel_margin_loss: target out of range [-1, ", c, ")");
  // Targets of sample i are t[i, 0..k) before its first −1; is_target marks those classes.
  const std::vector<int64_t> tv = to_vector<int64_t>(t.to(Device::cpu()));
  std::vector<double> valid(n * c, 0.0), is_t(n * c, 0.0);
  std::vector<int64_t> safe(n * c, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c && tv[i * c + j] >= 0; ++j) {
      valid[i * c + j] = 1;
      safe[i * c + j] = tv[i * c + j];
      is_t[i * c + tv[i * c + j]] = 1;
    }
  const Tensor mask = mul(from_vector(valid, Shape{n, c, 1}), rsub(from_vector(is_t, Shape{n, 1, c}), 1.0))
                          .to(DType::Bool)
                          .to(x.device());
  const Tensor idx = from_vector(safe, Shape{n, c}).to(x.device());
  // z[i, j, k] = 1 − x[i, target_j] + x[i, k] for each target j and each non-target k.
  const Variable z = add(rsub(gather(xm, 1, idx).unsqueeze(2), 1.0), xm.unsqueeze(1));
  const Variable h = where(mask, clamp_min0(z), zeros_of(z));
  return reduce(per_sample(div(sum(h, {1, 2}), static_cast<double>(c)), x), reduction);
}

Variable cosine_embedding_loss(const Variable& x1, const Variable& x2, const Tensor& y, double margin,
                               Reduction reduction) {
  check_float(x1, "cosine_embedding_loss", "input1");
  check_float(x2, "cosine_embedding_loss", "input2");
  DDL_CHECK(y.defined() && (y.dim() == 0 || y.dim() == 1), "cosine_embedding_loss: expected a 0-d or 1-d target, got ",
            y.defined() ? y.shape() : Shape{});
  if (y.dim() == 1)
    DDL_CHECK(x1.dim() == 2 && x2.dim() == 2, "cosine_embedding_loss: a 1-d target needs 2-d inputs, got ", x1.shape(),
              " and ", x2.shape());
  else
    DDL_CHECK(x1.dim() == 1 && x2.dim() == 1, "cosine_embedding_loss: a 0-d target needs 1-d inputs, got ", x1.shape(),
              " and ", x2.shape());
  const int64_t d = y.dim();
  constexpr double kEps = 1e-12;  // ATen's EPSILON in cosine_embedding_loss
  const Variable prod = sum(mul(x1, x2), {d});
  const Variable m1 = add(sum(mul(x1, x1), {d}), kEps), m2 = add(sum(mul(x2, x2), {d}), kEps);
  const Variable cos = div(prod, sqrt(mul(m1, m2)));
  const Variable z = zeros_of(cos);
  const Variable pos = where(eq(y, 1.0), rsub(cos, 1.0), z);
  const Variable neg_part = where(eq(y, -1.0), clamp_min0(sub(cos, margin)), z);
  return reduce(add(pos, neg_part), reduction);
}

Variable triplet_margin_loss(const Variable& anchor, const Variable& positive, const Variable& negative, double margin,
                             double p, double eps, bool swap, Reduction reduction) {
  check_float(anchor, "triplet_margin_loss", "anchor");
  check_float(positive, "triplet_margin_loss", "positive");
  check_float(negative, "triplet_margin_loss", "negative");
  DDL_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
            "triplet_margin_loss: all inputs must have the same number of dims, got ", anchor.shape(), ", ",
            positive.shape(), " and ", negative.shape());
  DDL_CHECK(anchor.dim() > 0, "triplet_margin_loss: inputs must have at least one dim");
  const Variable dp = pairwise_distance(anchor, positive, p, eps);
  Variable dn = pairwise_distance(anchor, negative, p, eps);
  if (swap) dn = minimum(dn, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp_min0(sub(add(dp, margin), dn)), reduction);
}

Variable poisson_nll_loss(const Variable& x, const Variable& y, bool log_input, bool full, double eps,
                          Reduction reduction) {
  check_float(x, "poisson_nll_loss", "input");
  check_float(y, "poisson_nll_loss", "target");
  Variable l = log_input ? sub(exp(x), mul(y, x)) : sub(x, mul(y, log(add(x, eps))));
  if (full) {
    // y log y − y + 0.5 log(2π y), zero where y <= 1 (masked after, as PyTorch: its slope there is 0).
    const Variable s = add(sub(mul(y, log(y)), y), mul(log(mul(y, 2 * std::numbers::pi)), 0.5));
    l = add(l, masked_fill(s, le(y.data(), 1.0), 0.0));
  }
  return reduce(l, reduction);
}

Variable gaussian_nll_loss(const Variable& x, const Variable& y, const Variable& var, bool full, double eps,
                           Reduction reduction) {
  check_float(x, "gaussian_nll_loss", "input");
  check_float(y, "gaussian_nll_loss", "target");
  check_float(var, "gaussian_nll_loss", "var");
  Variable v = var;
  if (var.shape() != x.shape()) {
    std::vector<int64_t> lead(x.shape().begin(), x.shape().end());
    if (!lead.empty()) lead.pop_back();
    std::vector<int64_t> vs(var.shape().begin(), var.shape().end());
    if (x.dim() > 0 && vs == lead) {
      v = var.unsqueeze(-1);  // one variance per sample, shared over the last dim
    } else {
      const bool ok =
          x.dim() > 0 && var.dim() > 0 && var.size(-1) == 1 && std::vector<int64_t>(vs.begin(), vs.end() - 1) == lead;
      DDL_CHECK(ok, "gaussian_nll_loss: var ", var.shape(), " must have the input's shape ", x.shape(),
                ", that shape without its last dim, or that shape with a last dim of 1");
    }
  }
  DDL_CHECK(sum(lt(v.data(), 0.0).to(DType::Int64)).item() == 0, "gaussian_nll_loss: var has negative entries");
  // PyTorch clamps a copy of var under no_grad: the value is max(var, eps), the slope is 1.
  const Variable vc = autograd::make_result(
      clamp(v.data(), std::optional<double>(eps), std::nullopt), "GaussianNllClampBackward", {&v},
      [](const Tensor& g, const std::vector<bool>&) { return std::vector<Tensor>{g}; },
      [](const Variable& g, const std::vector<bool>&) { return std::vector<Variable>{g}; });
  const Variable d = sub(x, y);
  Variable l = mul(add(log(vc), div(mul(d, d), vc)), 0.5);
  if (full) l = add(l, 0.5 * std::log(2 * std::numbers::pi));
  return reduce(l, reduction);
}

}  // namespace ddl
