// InstanceNorm1d/2d/3d and LocalResponseNorm (nn/norm_more.h). BatchNorm3d lives in
// layers.cpp with the other BatchNorms.
#include <sstream>

#include <ddl/autograd/ops/reduce.h>
#include <ddl/nn/norm_more.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

namespace {
std::string py_bool(bool b) { return b ? "True" : "False"; }
}  // namespace

InstanceNorm::InstanceNorm(const char* type_name, int64_t spatial_dims, const InstanceNormOptions& options)
    : Module(type_name), spatial_dims_(spatial_dims), options_(options) {
  const int64_t c = options.num_features();
  DDL_CHECK(c > 0, type_name, ": num_features must be positive, got ", c);
  if (options.affine()) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::Int64));
  }
}

Variable InstanceNorm::forward(const Variable& x) {
  const int64_t unbatched = spatial_dims_ + 1;
  DDL_CHECK(x.dim() == unbatched || x.dim() == unbatched + 1, type_name(), ": expected a ", unbatched, "-D or ",
            unbatched + 1, "-D input ([C, *] or [N, C, *] with ", spatial_dims_, " spatial dims), got ", x.shape());
  if (x.dim() == unbatched) return forward(x.unsqueeze(0)).squeeze(0);
  // PyTorch refuses a channel count other than num_features only with affine (it warns
  // otherwise, and then also refuses it when running statistics are kept).
  DDL_CHECK(!options_.affine() || x.size(1) == options_.num_features(), type_name(), ": input ", x.shape(), " has ",
            x.size(1), " channels, expected ", options_.num_features());
  const bool track = options_.track_running_stats();
  return instance_norm(x, track ? running_mean.data() : Tensor(), track ? running_var.data() : Tensor(), weight, bias,
                       is_training() || !track, options_.momentum(), options_.eps());
}

std::string InstanceNorm::extra_repr() const {
  std::ostringstream os;
  os << options_.num_features() << ", eps=" << options_.eps() << ", momentum=" << options_.momentum()
     << ", affine=" << py_bool(options_.affine())
     << ", track_running_stats=" << py_bool(options_.track_running_stats());
  return os.str();
}

std::shared_ptr<Module> InstanceNorm::clone() const {
  std::shared_ptr<InstanceNorm> copy;
  if (spatial_dims_ == 1)
    copy = std::make_shared<InstanceNorm1d>(options_);
  else if (spatial_dims_ == 2)
    copy = std::make_shared<InstanceNorm2d>(options_);
  else
    copy = std::make_shared<InstanceNorm3d>(options_);
  copy->copy_state_from(*this);
  return copy;
}

LocalResponseNorm::LocalResponseNorm(const LocalResponseNormOptions& options)
    : Module("LocalResponseNorm"), options_(options) {
  DDL_CHECK(options.size() > 0, "LocalResponseNorm: size must be positive, got ", options.size());
}

Variable LocalResponseNorm::forward(const Variable& x) {
  return local_response_norm(x, options_.size(), options_.alpha(), options_.beta(), options_.k());
}

std::string LocalResponseNorm::extra_repr() const {
  std::ostringstream os;
  os << options_.size() << ", alpha=" << options_.alpha() << ", beta=" << options_.beta() << ", k=" << options_.k();
  return os.str();
}

}  // namespace ddl::nn
