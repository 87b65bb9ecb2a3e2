// BatchNorm3d, InstanceNorm1d/2d/3d and LocalResponseNorm (torch.nn's). BatchNorm3d is
// BatchNorm (layers.h) over [N, C, D, H, W]; InstanceNorm keeps running statistics only
// with track_running_stats and takes an unbatched input [C, *] as PyTorch 1.13 does.
// The functions are in autograd/ops/norm_more.h.
#pragma once

#include <ddl/autograd/ops/norm_more.h>
#include <ddl/nn/layers.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

class BatchNorm3d : public BatchNorm {
 public:
  explicit BatchNorm3d(const BatchNorm3dOptions& o) : BatchNorm("BatchNorm3d", 5, o) {}
  explicit BatchNorm3d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm3d", 5, num_features, eps, momentum, affine, track_running_stats) {}
};

// LibTorch's InstanceNormOptions; PyTorch's defaults (no affine, no running stats).
struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, num_features);
  DDL_ARG(double, eps) = 1e-5;
  DDL_ARG(double, momentum) = 0.1;
  DDL_ARG(bool, affine) = false;
  DDL_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// x: [N, C, *spatial] or unbatched [C, *spatial], with spatial_dims spatial dims.
// Training (or no running stats): each sample's statistics, updating the running ones;
// eval with running stats: those.
class InstanceNorm : public Module {
 public:
  InstanceNorm(const char* type_name, int64_t spatial_dims, const InstanceNormOptions& options);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override;
  const InstanceNormOptions& options() const { return options_; }
  Variable weight, bias;               // [C] (ones, zeros) when affine
  Variable running_mean, running_var;  // [C] (zeros, ones) when track_running_stats
  Variable num_batches_tracked;        // int64 scalar when track_running_stats; PyTorch never advances it here

 private:
  int64_t spatial_dims_;
  InstanceNormOptions options_;
};

class InstanceNorm1d : public InstanceNorm {
 public:
  InstanceNorm1d(const InstanceNormOptions& options) : InstanceNorm("InstanceNorm1d", 1, options) {}  // NOLINT
  explicit InstanceNorm1d(int64_t num_features) : InstanceNorm1d(InstanceNormOptions(num_features)) {}
};
class InstanceNorm2d : public InstanceNorm {
 public:
  InstanceNorm2d(const InstanceNormOptions& options) : InstanceNorm("InstanceNorm2d", 2, options) {}  // NOLINT
  explicit InstanceNorm2d(int64_t num_features) : InstanceNorm2d(InstanceNormOptions(num_features)) {}
};
class InstanceNorm3d : public InstanceNorm {
 public:
  InstanceNorm3d(const InstanceNormOptions& options) : InstanceNorm("InstanceNorm3d", 3, options) {}  // NOLINT
  explicit InstanceNorm3d(int64_t num_features) : InstanceNorm3d(InstanceNormOptions(num_features)) {}
};

struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, size);
  DDL_ARG(double, alpha) = 1e-4;
  DDL_ARG(double, beta) = 0.75;
  DDL_ARG(double, k) = 1.0;
};

// Normalises each channel by its neighbours across channels (AlexNet's LRN).
class LocalResponseNorm : public Module {
 public:
  LocalResponseNorm(const LocalResponseNormOptions& options);  // NOLINT: LibTorch's form
  explicit LocalResponseNorm(int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0)
      : LocalResponseNorm(LocalResponseNormOptions(size).alpha(alpha).beta(beta).k(k)) {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  // No parameters or buffers: a copy is a deep copy.
  std::shared_ptr<Module> clone() const override { return std::make_shared<LocalResponseNorm>(*this); }

 private:
  LocalResponseNormOptions options_;
};

}  // namespace ddl::nn
