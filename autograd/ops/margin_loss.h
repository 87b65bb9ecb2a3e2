// Margin, embedding and likelihood losses as torch.nn.functional's (PyTorch 1.13):
// margin_ranking, hinge_embedding, soft_margin, multilabel_soft_margin, multi_margin,
// multilabel_margin, cosine_embedding, triplet_margin, poisson_nll, gaussian_nll.
// Each is composed of differentiable ops (margin_loss.cpp), so gradients follow from
// autograd; inputs broadcast where PyTorch's formula broadcasts. Targets used only as
// labels or conditions are plain Tensors; targets inside the formula are Variables.
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl {

// max(0, −y (x1 − x2) + margin); x1, x2 and y must have the same number of dims.
Variable margin_ranking_loss(const Variable& x1, const Variable& x2, const Variable& y, double margin = 0,
                             Reduction reduction = Reduction::Mean);
// x where y == 1, max(0, margin − x) where y == −1 (any other y adds both terms, as PyTorch).
Variable hinge_embedding_loss(const Variable& x, const Tensor& y, double margin = 1.0,
                              Reduction reduction = Reduction::Mean);
// log(1 + exp(−y x)); y is not differentiated (PyTorch refuses a target that requires grad).
Variable soft_margin_loss(const Variable& x, const Tensor& y, Reduction reduction = Reduction::Mean);
// −(y log σ(x) + (1 − y) log σ(−x)) · weight, averaged over the last (class) dim.
// weight: undefined, or broadcastable to x.
Variable multilabel_soft_margin_loss(const Variable& x, const Variable& y, const Tensor& weight = {},
                                     Reduction reduction = Reduction::Mean);
// x: [N, C] or [C]; y: int64 class indices [N] or []. Σ_{j≠y} max(0, margin − x[y] + x[j])^p · w[y] / C,
// p 1 or 2; weight: undefined or [C].
Variable multi_margin_loss(const Variable& x, const Tensor& y, int64_t p = 1, double margin = 1.0,
                           const Tensor& weight = {}, Reduction reduction = Reduction::Mean);
// x: [N, C] or [C]; y: int64 of x's shape holding target classes, ended by the first −1.
// Σ_{j target} Σ_{k not target} max(0, 1 − (x[j] − x[k])) / C.
Variable multilabel_margin_loss(const Variable& x, const Tensor& y, Reduction reduction = Reduction::Mean);
// x1, x2: [N, D] with y [N], or [D] with y []; 1 − cos where y == 1, max(0, cos − margin) where y == −1.
Variable cosine_embedding_loss(const Variable& x1, const Variable& x2, const Tensor& y, double margin = 0,
                               Reduction reduction = Reduction::Mean);
// max(0, margin + d(a, p) − d(a, n)), d(u, v) = ‖u − v + eps‖_p over the last dim; with swap,
// d(a, n) is min(d(a, n), d(p, n)). Inputs must have the same number of dims.
Variable triplet_margin_loss(const Variable& anchor, const Variable& positive, const Variable& negative,
                             double margin = 1.0, double p = 2, double eps = 1e-6, bool swap = false,
                             Reduction reduction = Reduction::Mean);
// log_input: exp(x) − y x, else x − y log(x + eps); full adds Stirling's term
// y log y − y + 0.5 log(2π y) where y > 1.
Variable poisson_nll_loss(const Variable& x, const Variable& y, bool log_input = true, bool full = false,
                          double eps = 1e-8, Reduction reduction = Reduction::Mean);
// 0.5 (log v + (x − y)² / v) (+ 0.5 log 2π when full), v = max(var, eps) (the clamp is not
// differentiated). var: x's shape, x's shape without the last dim, or that with a last dim of 1.
Variable gaussian_nll_loss(const Variable& x, const Variable& y, const Variable& var, bool full = false,
                           double eps = 1e-6, Reduction reduction = Reduction::Mean);

}  // namespace ddl
