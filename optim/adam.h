// Adam (Kingma & Ba) and AdamW (decoupled weight decay), PyTorch's update:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  (amsgrad: v_max = max(v_max, v), used for v)
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// Adam adds weight_decay * p to g; AdamW multiplies p by (1 - lr * weight_decay) first.
// amsgrad: Reddi et al., "On the Convergence of Adam and Beyond", ICLR 2018.
#pragma once

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false;
};

// AdamW's defaults are torch.optim.AdamW's: weight_decay 1e-2 (Adam's is 0).
struct AdamWOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
  bool amsgrad = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Variable> params, AdamOptions opts, bool decoupled_weight_decay = false);
  void step() override;

 private:
  bool decoupled_;
};

class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<Variable> params, AdamWOptions opts = {});
};

}  // namespace ddl::optim
