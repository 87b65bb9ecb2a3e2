// The standard layers' construction, forward and printing.
#include "nn/layers.h"

#include <sstream>

#include "nn/init.h"
#include "tensor/factory.h"

namespace ddl::nn {

namespace {
std::string bool_str(bool b) { return b ? "True" : "False"; }
}  // namespace

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias)
    : Cloneable("Linear"), in_(in_features), out_(out_features), has_bias_(has_bias) {
  DDL_CHECK(in_features > 0 && out_features > 0, "Linear: features must be positive, got in=", in_features,
            " out=", out_features);
  reset();
}

void Linear::reset() {
  weight = register_parameter("weight", empty({out_, in_}));
  bias = has_bias_ ? register_parameter("bias", empty({out_})) : Variable();
  init::default_linear_conv_init(weight.data(), has_bias_ ? bias.data() : Tensor());
}

Variable Linear::forward(const Variable& x) { return linear(x, weight, bias); }

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_) + ", out_features=" + std::to_string(out_) +
         ", bias=" + bool_str(bias.defined());
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Conv2dOptions opts)
    : Module("Conv2d"), in_(in_channels), out_(out_channels), k_(kernel_size), opts_(opts) {
  DDL_CHECK(in_channels > 0 && out_channels > 0 && kernel_size > 0,
            "Conv2d: channels and kernel size must be positive");
  DDL_CHECK(opts.groups > 0 && in_channels % opts.groups == 0 && out_channels % opts.groups == 0,
            "Conv2d: groups=", opts.groups, " must divide in_channels=", in_channels,
            " and out_channels=", out_channels);
  weight = register_parameter("weight", empty({out_channels, in_channels / opts.groups, kernel_size, kernel_size}));
  if (opts.bias) bias = register_parameter("bias", empty({out_channels}));
  init::default_linear_conv_init(weight.data(), opts.bias ? bias.data() : Tensor());
}

Variable Conv2d::forward(const Variable& x) {
  Conv2dParams p;
  p.stride = {opts_.stride, opts_.stride};
  p.padding = {opts_.padding, opts_.padding};
  p.dilation = {opts_.dilation, opts_.dilation};
  p.groups = opts_.groups;
  return conv2d(x, weight, bias, p);
}

std::string Conv2d::extra_repr() const {
  std::ostringstream os;
  os << in_ << ", " << out_ << ", kernel_size=(" << k_ << ", " << k_ << "), stride=(" << opts_.stride << ", "
     << opts_.stride << ")";
  if (opts_.padding) os << ", padding=(" << opts_.padding << ", " << opts_.padding << ")";
  if (opts_.dilation != 1) os << ", dilation=(" << opts_.dilation << ", " << opts_.dilation << ")";
  if (opts_.groups != 1) os << ", groups=" << opts_.groups;
  if (!opts_.bias) os << ", bias=False";
  return os.str();
}

BatchNorm::BatchNorm(const char* type_name, int64_t expected_dims, int64_t num_features, double eps, double momentum,
                     bool affine, bool track)
    : Module(type_name),
      expected_dims_(expected_dims),
      num_features_(num_features),
      eps_(eps),
      momentum_(momentum),
      affine_(affine),
      track_(track) {
  DDL_CHECK(num_features > 0, type_name, ": num_features must be positive, got ", num_features);
  if (affine) {
    weight = register_parameter("weight", ones({num_features}));
    bias = register_parameter("bias", zeros({num_features}));
  }
  if (track) {
    running_mean = register_buffer("running_mean", zeros({num_features}));
    running_var = register_buffer("running_var", ones({num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, DType::Int64));
  }
}

Variable BatchNorm::forward(const Variable& x) {
  const bool ok_rank = expected_dims_ == 4 ? x.dim() == 4 : (x.dim() == 2 || x.dim() == 3);
  DDL_CHECK(ok_rank, type_name(), ": expected a ",
            expected_dims_ == 4 ? "4-D [N, C, H, W]" : "2-D [N, C] or 3-D [N, C, L]", " input, got ", x.shape());
  DDL_CHECK(x.size(1) == num_features_, type_name(), ": input ", x.shape(), " has ", x.size(1), " channels, expected ",
            num_features_);
  const bool use_batch_stats = is_training() || !track_;
  if (is_training() && track_) num_batches_tracked.data().add_(1.0);
  return batch_norm(x, weight, bias, track_ ? running_mean.data() : Tensor(), track_ ? running_var.data() : Tensor(),
                    use_batch_stats, momentum_, eps_);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << num_features_ << ", eps=" << eps_ << ", momentum=" << momentum_ << ", affine=" << bool_str(affine_)
     << ", track_running_stats=" << bool_str(track_);
  return os.str();
}

namespace {
Pool2dParams pool_params(int64_t k, int64_t stride, int64_t padding) {
  Pool2dParams p;
  p.kernel = {k, k};
  p.stride = {stride ? stride : k, stride ? stride : k};
  p.padding = {padding, padding};
  return p;
}
std::string pool_repr(const Pool2dParams& p) {
  return "kernel_size=" + std::to_string(p.kernel[0]) + ", stride=" + std::to_string(p.stride[0]) +
         ", padding=" + std::to_string(p.padding[0]);
}
}  // namespace

MaxPool2d::MaxPool2d(int64_t k, int64_t stride, int64_t padding)
    : Module("MaxPool2d"), params_(pool_params(k, stride, padding)) {}
std::string MaxPool2d::extra_repr() const { return pool_repr(params_) + ", dilation=1, ceil_mode=False"; }

AvgPool2d::AvgPool2d(int64_t k, int64_t stride, int64_t padding)
    : Module("AvgPool2d"), params_(pool_params(k, stride, padding)) {}
std::string AvgPool2d::extra_repr() const { return pool_repr(params_); }

Variable AdaptiveAvgPool2d::forward(const Variable& x) {
  DDL_CHECK(x.dim() == 4, "AdaptiveAvgPool2d: expected [N, C, H, W], got ", x.shape());
  const int64_t h = x.size(2), w = x.size(3);
  if (out_[0] == 1 && out_[1] == 1) return mean(x, {2, 3}, true);
  DDL_CHECK(h % out_[0] == 0 && w % out_[1] == 0, "AdaptiveAvgPool2d: output ", out_[0], "x", out_[1],
            " must divide the input's ", h, "x", w, " in this version");
  Pool2dParams p;
  p.kernel = {h / out_[0], w / out_[1]};
  p.stride = p.kernel;
  return avg_pool2d(x, p);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=(" + std::to_string(out_[0]) + ", " + std::to_string(out_[1]) + ")";
}

Dropout::Dropout(double p, Generator* gen) : Cloneable("Dropout"), p_(p), gen_(gen) {
  DDL_CHECK(p >= 0 && p <= 1, "Dropout: probability must be in [0, 1], got ", p);
}

Variable Dropout::forward(const Variable& x) {
  return dropout(x, p_, is_training(), gen_ ? *gen_ : default_generator());
}

std::string Dropout::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p_ << ", inplace=False";
  return os.str();
}

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_);
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) : Module("Sequential") {
  for (auto& m : modules) push_back(std::move(m));
}

void Sequential::push_back(std::shared_ptr<Module> m) { add_child(std::to_string(size()), std::move(m)); }

Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  for (auto& [name, m] : named_children()) h = call_child(*m, name, h);
  return h;
}

std::shared_ptr<Module> Sequential::clone() const {
  auto copy = std::make_shared<Sequential>();
  for (const auto& [name, m] : named_children()) copy->push_back(m->clone());
  copy->set_training_flag(is_training());
  return copy;
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  DDL_CHECK(i < size(), "Sequential: index ", i, " out of range for ", size(), " modules");
  return named_children()[i].second;
}

}  // namespace ddl::nn
