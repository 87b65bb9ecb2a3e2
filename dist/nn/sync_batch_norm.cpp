// SyncBatchNorm's forward and backward. See Note [SyncBatchNorm].
#include <cmath>
#include <vector>

#include <ddl/autograd/node.h>
#include <ddl/dist/nn/sync_batch_norm.h>
#include <ddl/nn/layers.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/join.h>
#include <ddl/tensor/ops/norm.h>

namespace ddl::dist {

// Note [SyncBatchNorm]
// Forward: each rank packs [count, mean[C], M2[C]] of its batch (M2 = Σ (x - mean)²,
// in float64) and all-gathers the packs; every rank then combines them with Chan et al.'s
// pairwise formula (mean = Σ n_i·mean_i / n; M2 = Σ M2_i + n_i·(mean_i - mean)²), the
// same bits everywhere, and normalises its own rows with the group's mean and biased
// variance M2/n. PyTorch gathers (count, mean, invstd) and recovers the variance from
// invstd; M2 keeps the digits that 1/sqrt(var + eps) would round away.
// Backward: with g = dL/dy, each rank sums sum_dy = Σ g and sum_dy_xmu = Σ g·(x - mean)
// over its rows, one all-reduce adds them over the group, and
//   dx = (g - sum_dy/n - (x - mean)·invstd²·sum_dy_xmu/n) · invstd · weight,
// the gradient of Σ_ranks loss. Weight and bias get this rank's Σ g·x̂ and Σ g: the loss
// of rank r depends on the weight only through rank r's rows, so the sum over ranks (what
// DDP's all-reduce forms, then divides by the world) is the whole batch's gradient.

namespace {

constexpr const char* kOp = "SyncBatchNorm";

// x's elements as [N, C, S] in float64.
Tensor as_ncs64(const Tensor& x) {
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.dim(); ++d) spatial *= x.size(d);
  return x.contiguous().to(DType::Float64).reshape({x.size(0), x.size(1), spatial});
}

struct GroupStats {
  Tensor mean, var;  // [C] float64: the group's mean and biased variance
  double count = 0;  // rows·spatial over the group
  Tensor m2;         // [C] float64: Σ (x - mean)² over the group
};

GroupStats gather_stats(const Tensor& x64, ProcessGroup& group) {
  const int64_t c = x64.size(1);
  const double n_local = static_cast<double>(x64.size(0) * x64.size(2));
  Tensor mean = zeros({c}, DType::Float64), m2 = zeros({c}, DType::Float64);
  if (n_local > 0) {
    mean = x64.sum({0, 2}) / n_local;
    const Tensor d = x64 - mean.reshape({1, c, 1});
    m2 = (d * d).sum({0, 2});
  }
  const Tensor pack = cat({full({1}, n_local, DType::Float64), mean, m2});
  const Tensor all = zeros({group.size() * (1 + 2 * c)}, DType::Float64);
  group.all_gather(all, pack);

  const std::vector<double> v = to_vector<double>(all);
  const auto at = [&](int r, int64_t k) { return v[static_cast<size_t>(r * (1 + 2 * c) + k)]; };
  GroupStats s;
  for (int r = 0; r < group.size(); ++r) s.count += at(r, 0);
  std::vector<double> gm(static_cast<size_t>(c), 0.0), gm2(static_cast<size_t>(c), 0.0);
  for (int64_t k = 0; k < c; ++k) {
    double sum = 0;
    for (int r = 0; r < group.size(); ++r) sum += at(r, 0) * at(r, 1 + k);
    const double m = s.count > 0 ? sum / s.count : 0.0;
    double acc = 0;
    for (int r = 0; r < group.size(); ++r) {
      const double dm = at(r, 1 + k) - m;
      acc += at(r, 1 + c + k) + at(r, 0) * dm * dm;
    }
    gm[static_cast<size_t>(k)] = m, gm2[static_cast<size_t>(k)] = acc;
  }
  s.mean = from_vector(gm);
  s.m2 = from_vector(gm2);
  s.var = s.count > 0 ? s.m2 / s.count : zeros({c}, DType::Float64);
  return s;
}

}  // namespace

Variable sync_batch_norm(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                         Tensor running_var, double momentum, double eps, std::shared_ptr<ProcessGroup> group) {
  DDL_CHECK(group != nullptr, kOp, ": no process group");
  DDL_CHECK(x.device().is_cpu(), kOp, ": CPU tensors only (the statistics travel through gloo), got x on ",
            x.device().str());
  DDL_CHECK(x.dim() >= 2, kOp, ": expected an input [N, C, *], got ", x.shape());
  DDL_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, kOp,
            ": expected a float32 or float64 input, got ", dtype_name(x.dtype()), " ", x.shape());
  DDL_CHECK(running_mean.defined() == running_var.defined(), kOp,
            ": running_mean and running_var must both be given or both be undefined");
  const Tensor xd = x.data();
  const int64_t c = x.size(1);
  const DType pdtype = batch_norm_param_dtype(x.dtype());
  const Tensor x64 = as_ncs64(xd);
  const GroupStats s = gather_stats(x64, *group);
  DDL_CHECK(s.count > 1, kOp, ": expected more than 1 value per channel when training, got ", s.count,
            " over the group (input ", x.shape(), " on rank ", group->rank(), " of ", group->size(), ")");
  if (running_mean.defined()) {
    // PyTorch: running = (1 - momentum)·running + momentum·batch, with the unbiased variance.
    const Tensor unbiased = s.m2 / (s.count - 1);
    running_mean.copy_(running_mean * (1 - momentum) + s.mean.to(running_mean.dtype()) * momentum);
    running_var.copy_(running_var * (1 - momentum) + unbiased.to(running_var.dtype()) * momentum);
  }
  // Normalising with given statistics is batch_norm's evaluation path.
  const Tensor wd = weight.defined() ? weight.data() : Tensor();
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  const Tensor mean_p = s.mean.to(pdtype), var_p = s.var.to(pdtype);
  BatchNormResult r = batch_norm(xd, wd, bd, mean_p, var_p, false, 0.0, eps);

  std::vector<const Variable*> inputs{&x};
  std::vector<int> slot{0};
  if (weight.defined()) inputs.push_back(&weight), slot.push_back(1);
  if (bias.defined()) inputs.push_back(&bias), slot.push_back(2);
  const Tensor mean = r.save_mean, invstd = r.save_invstd;
  const double count = s.count;
  return autograd::make_result(
      r.y, "SyncBatchNormBackward", inputs,
      [xd, wd, mean, invstd, count, group, slot, c, pdtype](const Tensor& g, const std::vector<bool>& needs) {
        std::array<bool, 3> want{false, false, false};
        for (size_t k = 0; k < slot.size(); ++k) want[static_cast<size_t>(slot[k])] = needs[k];
        const Tensor g64 = as_ncs64(g);
        const Tensor mean64 = mean.to(DType::Float64).reshape({1, c, 1});
        const Tensor invstd64 = invstd.to(DType::Float64).reshape({1, c, 1});
        const Tensor xmu = as_ncs64(xd) - mean64;
        Tensor sum_dy = g64.sum({0, 2}), sum_dy_xmu = (g64 * xmu).sum({0, 2});
        Tensor all[3];
        if (want[1]) all[1] = (sum_dy_xmu * invstd64.reshape({c})).to(wd.defined() ? wd.dtype() : pdtype);
        if (want[2]) all[2] = sum_dy.to(wd.defined() ? wd.dtype() : pdtype);
        if (want[0]) {
          // See Note [SyncBatchNorm]: the group's sums make the gradient of Σ_ranks loss.
          const Tensor both = cat({sum_dy, sum_dy_xmu});
          group->all_reduce(both);
          sum_dy = both.narrow(0, 0, c).reshape({1, c, 1}), sum_dy_xmu = both.narrow(0, c, c).reshape({1, c, 1});
          Tensor scale = invstd64;
          if (wd.defined()) scale = scale * wd.to(DType::Float64).reshape({1, c, 1});
          const Tensor gi = (g64 - sum_dy / count - xmu * (invstd64 * invstd64) * (sum_dy_xmu / count)) * scale;
          all[0] = gi.reshape(xd.shape()).to(xd.dtype());
        }
        std::vector<Tensor> out;
        for (int k : slot) out.push_back(all[k]);
        return out;
      });
}

std::shared_ptr<nn::Module> convert_sync_batchnorm(std::shared_ptr<nn::Module> module,
                                                   std::shared_ptr<ProcessGroup> group) {
  DDL_CHECK(module != nullptr, "convert_sync_batchnorm: module is null");
  DDL_CHECK(group != nullptr, "convert_sync_batchnorm: process group is null");
  for (const auto& m : module->modules()) {
    auto* bn = dynamic_cast<nn::BatchNorm*>(m.get());
    if (!bn) continue;
    bn->set_training_forward([group](const Variable& x, const Variable& w, const Variable& b, const Tensor& rm,
                                     const Tensor& rv, double momentum,
                                     double eps) { return sync_batch_norm(x, w, b, rm, rv, momentum, eps, group); });
  }
  return module;
}

int count_sync_batchnorm(const nn::Module& module) {
  int n = 0;
  for (const auto& m : module.modules()) {
    const auto* bn = dynamic_cast<const nn::BatchNorm*>(m.get());
    if (bn && bn->has_training_forward()) ++n;
  }
  return n;
}

}  // namespace ddl::dist
