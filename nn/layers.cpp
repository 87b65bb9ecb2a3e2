// The standard layers' construction, forward and printing.
#include <sstream>
#include <typeinfo>

#include <ddl/autograd/ops/norm_relu.h>
#include <ddl/nn/forward_hooks.h>
#include <ddl/nn/init.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/norm_more.h>
#include <ddl/tensor/core/factory.h>

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

Conv2d::Conv2d(const Conv2dOptions& opts) : Module("Conv2d"), opts_(opts) {
  const int64_t in_channels = opts.in_channels(), out_channels = opts.out_channels(), groups = opts.groups();
  const Size2 kernel_size = opts.kernel_size();
  DDL_CHECK(in_channels > 0 && out_channels > 0 && kernel_size[0] > 0 && kernel_size[1] > 0,
            "Conv2d: channels and kernel size must be positive, got in=", in_channels, " out=", out_channels,
            " kernel_size=", kernel_size.pair_repr());
  DDL_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0, "Conv2d: groups=", groups,
            " must divide in_channels=", in_channels, " and out_channels=", out_channels);
  weight = register_parameter("weight", empty({out_channels, in_channels / groups, kernel_size[0], kernel_size[1]}));
  if (opts.bias()) bias = register_parameter("bias", empty({out_channels}));
  init::default_linear_conv_init(weight.data(), opts.bias() ? bias.data() : Tensor());
}

std::shared_ptr<Module> Conv2d::clone() const {
  auto copy = std::make_shared<Conv2d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

Variable Conv2d::forward(const Variable& x) {
  Conv2dParams p;
  p.stride = opts_.stride(), p.padding = opts_.padding(), p.dilation = opts_.dilation();
  p.groups = opts_.groups();
  return conv2d(x, weight, bias, p);
}

std::string Conv2d::extra_repr() const {
  std::ostringstream os;
  os << opts_.in_channels() << ", " << opts_.out_channels() << ", kernel_size=" << opts_.kernel_size().pair_repr()
     << ", stride=" << opts_.stride().pair_repr();
  if (!opts_.padding().all(0)) os << ", padding=" << opts_.padding().pair_repr();
  if (!opts_.dilation().all(1)) os << ", dilation=" << opts_.dilation().pair_repr();
  if (opts_.groups() != 1) os << ", groups=" << opts_.groups();
  if (!opts_.bias()) os << ", bias=False";
  return os.str();
}

// See BatchNormOptions: momentum=None (a cumulative moving average) is refused.
static double checked_momentum(const char* type_name, const std::optional<double>& momentum) {
  DDL_CHECK(momentum.has_value(), type_name, ": momentum=None (a cumulative moving average) is not supported");
  return *momentum;
}

BatchNorm::BatchNorm(const char* type_name, int64_t expected_dims, const BatchNormOptions& o)
    : BatchNorm(type_name, expected_dims, o.num_features(), o.eps(), checked_momentum(type_name, o.momentum()),
                o.affine(), o.track_running_stats()) {}

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

Variable BatchNorm::forward(const Variable& x) { return forward_impl(x, false); }

Variable BatchNorm::forward_relu(const Variable& x) { return forward_impl(x, true); }

Variable BatchNorm::forward_impl(const Variable& x, bool relu) {
  const bool ok_rank = expected_dims_ >= 4 ? x.dim() == expected_dims_ : (x.dim() == 2 || x.dim() == 3);
  const char* expected = expected_dims_ == 5   ? "5-D [N, C, D, H, W]"
                         : expected_dims_ == 4 ? "4-D [N, C, H, W]"
                                               : "2-D [N, C] or 3-D [N, C, L]";
  DDL_CHECK(ok_rank, type_name(), ": expected a ", expected, " input, got ", x.shape());
  DDL_CHECK(x.size(1) == num_features_, type_name(), ": input ", x.shape(), " has ", x.size(1), " channels, expected ",
            num_features_);
  const bool use_batch_stats = is_training() || !track_;
  if (is_training() && track_) num_batches_tracked.data().add_(1.0);
  if (is_training() && training_forward_) {
    Variable y = training_forward_(x, weight, bias, track_ ? running_mean.data() : Tensor(),
                                   track_ ? running_var.data() : Tensor(), momentum_, eps_);
    return relu ? ddl::relu(y) : y;
  }
  const Tensor rm = track_ ? running_mean.data() : Tensor(), rv = track_ ? running_var.data() : Tensor();
  if (relu) return ddl::detail::batch_norm_relu(x, weight, bias, rm, rv, use_batch_stats, momentum_, eps_);
  return batch_norm(x, weight, bias, rm, rv, use_batch_stats, momentum_, eps_);
}

std::string BatchNorm::extra_repr() const {
  std::ostringstream os;
  os << num_features_ << ", eps=" << eps_ << ", momentum=" << momentum_ << ", affine=" << bool_str(affine_)
     << ", track_running_stats=" << bool_str(track_);
  return os.str();
}

std::shared_ptr<Module> BatchNorm::clone() const {
  std::shared_ptr<BatchNorm> copy;
  if (expected_dims_ == 5)
    copy = std::make_shared<BatchNorm3d>(num_features_, eps_, momentum_, affine_, track_);
  else if (expected_dims_ == 4)
    copy = std::make_shared<BatchNorm2d>(num_features_, eps_, momentum_, affine_, track_);
  else
    copy = std::make_shared<BatchNorm1d>(num_features_, eps_, momentum_, affine_, track_);
  copy->copy_state_from(*this);
  copy->training_forward_ = training_forward_;
  return copy;
}

namespace {
// A stride of 0 in a dim means the kernel size there (PyTorch's stride=None).
Size2 default_stride(Size2 stride, Size2 kernel) {
  if (stride.all(0)) return kernel;
  if (stride[0] != 0 && stride[1] != 0) return stride;
  return Size2(stride[0] ? stride[0] : kernel[0], stride[1] ? stride[1] : kernel[1]);
}
Pool2dParams pool_params(Size2 k, Size2 stride, Size2 padding, Size2 dilation, bool ceil_mode) {
  Pool2dParams p;
  p.kernel = k, p.stride = stride, p.padding = padding, p.dilation = dilation;
  p.ceil_mode = ceil_mode;
  return p;
}
}  // namespace

MaxPool2d::MaxPool2d(Size2 k, Size2 stride, Size2 padding, Size2 dilation, bool ceil_mode)
    : Module("MaxPool2d"),
      params_(pool_params(k, default_stride(stride, k), padding, dilation, ceil_mode)),
      kernel_(k),
      stride_(default_stride(stride, k)),
      padding_(padding),
      dilation_(dilation) {}
std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + kernel_.repr() + ", stride=" + stride_.repr() + ", padding=" + padding_.repr() +
         ", dilation=" + dilation_.repr() + ", ceil_mode=" + bool_str(params_.ceil_mode);
}

AvgPool2d::AvgPool2d(Size2 k, Size2 stride, Size2 padding, bool ceil_mode, bool count_include_pad)
    : Module("AvgPool2d"),
      params_(pool_params(k, default_stride(stride, k), padding, 1, ceil_mode)),
      kernel_(k),
      stride_(default_stride(stride, k)),
      padding_(padding) {
  params_.count_include_pad = count_include_pad;
}
// As PyTorch's AvgPool2d, which prints neither ceil_mode nor count_include_pad.
std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + kernel_.repr() + ", stride=" + stride_.repr() + ", padding=" + padding_.repr();
}

Variable AdaptiveAvgPool2d::forward(const Variable& x) {
  // Unbatched [C, H, W] input is accepted, as by PyTorch's module.
  DDL_CHECK(x.dim() == 3 || x.dim() == 4, "AdaptiveAvgPool2d: expected [N, C, H, W] or [C, H, W], got ", x.shape());
  DDL_CHECK(out_[0] > 0 && out_[1] > 0, "AdaptiveAvgPool2d: output_size must be positive, got ", out_.pair_repr());
  const int64_t h = x.size(-2), w = x.size(-1);
  if (out_.all(1)) return mean(x, {-2, -1}, true);
  if (h > 0 && w > 0 && h % out_[0] == 0 && w % out_[1] == 0) {  // equal windows: plain average pooling
    Pool2dParams p;
    p.kernel = {h / out_[0], w / out_[1]};
    p.stride = p.kernel;
    return avg_pool2d(x, p);
  }
  return adaptive_avg_pool2d(x, out_);
}

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + out_.repr(); }

CrossEntropyLoss::CrossEntropyLoss(Tensor weight, CrossEntropyOptions opts) : Module("CrossEntropyLoss"), opts_(opts) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable CrossEntropyLoss::forward(const Variable& logits, const Tensor& target) const {
  return weight_.defined() ? cross_entropy(logits, target, weight_.data(), opts_)
                           : cross_entropy(logits, target, opts_);
}

std::shared_ptr<Module> CrossEntropyLoss::clone() const {
  auto copy = weight_.defined() ? std::make_shared<CrossEntropyLoss>(weight_.data(), opts_)
                                : std::make_shared<CrossEntropyLoss>(opts_);
  copy->copy_state_from(*this);  // the weight's values in fresh storage, and the training flag
  return copy;
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

// Note [Sequential fuses BatchNorm + ReLU]
// A BatchNorm child followed by a ReLU child runs as one fused op (BatchNorm::forward_relu):
// the BatchNorm's output is seen by nobody but the ReLU, so it need not exist (PyTorch's
// ReLU(inplace=True) after BatchNorm2d saves the same memory). Not while forward hooks,
// tracing or anomaly detection are on, since they observe each child on its own.
Variable Sequential::forward(const Variable& x) {
  Variable h = x;
  const auto& children = named_children();
  const bool may_fuse = !any_forward_hooks() && !trace::enabled() && !autograd::is_anomaly_enabled();
  for (size_t i = 0; i < children.size(); ++i) {
    const auto& [name, m] = children[i];
    if (may_fuse && i + 1 < children.size()) {
      auto* bn = dynamic_cast<BatchNorm*>(m.get());
      const Module* next = children[i + 1].second.get();
      if (bn && typeid(*next) == typeid(ReLU)) {
        h = bn->forward_relu(h);
        ++i;
        continue;
      }
    }
    h = run_forward_hooked(*m, [&, &name = name, &m = m] { return call_child(*m, name, h); });
  }
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
