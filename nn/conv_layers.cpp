// Conv1d and ConvTranspose2d: parameter shapes, checks, forward, printing.
#include <sstream>

#include <ddl/nn/conv_checks.h>
#include <ddl/nn/conv_layers.h>
#include <ddl/nn/init.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

Conv1d::Conv1d(const Conv1dOptions& opts) : Module("Conv1d"), opts_(opts) {
  const int64_t in_channels = opts.in_channels(), out_channels = opts.out_channels(), kernel_size = opts.kernel_size();
  detail::check_conv_channels("Conv1d", in_channels, out_channels, opts.groups());
  DDL_CHECK(kernel_size > 0, "Conv1d: kernel_size must be positive, got ", kernel_size);
  weight = register_parameter("weight", empty({out_channels, in_channels / opts.groups(), kernel_size}));
  if (opts.bias()) bias = register_parameter("bias", empty({out_channels}));
  init::default_linear_conv_init(weight.data(), opts.bias() ? bias.data() : Tensor());
}

std::shared_ptr<Module> Conv1d::clone() const {
  auto copy = std::make_shared<Conv1d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

Variable Conv1d::forward(const Variable& x) {
  return conv1d(x, weight, bias, opts_.stride(), opts_.padding(), opts_.dilation(), opts_.groups());
}

std::string Conv1d::extra_repr() const {
  std::ostringstream os;
  os << opts_.in_channels() << ", " << opts_.out_channels() << ", kernel_size=(" << opts_.kernel_size()
     << ",), stride=(" << opts_.stride() << ",)";
  if (opts_.padding()) os << ", padding=(" << opts_.padding() << ",)";
  if (opts_.dilation() != 1) os << ", dilation=(" << opts_.dilation() << ",)";
  if (opts_.groups() != 1) os << ", groups=" << opts_.groups();
  if (!opts_.bias()) os << ", bias=False";
  return os.str();
}

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& opts) : Module("ConvTranspose2d"), opts_(opts) {
  const int64_t in_channels = opts.in_channels(), out_channels = opts.out_channels();
  const Size2 kernel_size = opts.kernel_size();
  detail::check_conv_channels("ConvTranspose2d", in_channels, out_channels, opts.groups());
  DDL_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0, "ConvTranspose2d: kernel_size must be positive, got ",
            kernel_size.pair_repr());
  for (int i = 0; i < 2; ++i)
    DDL_CHECK(opts.output_padding()[i] >= 0 &&
                  (opts.output_padding()[i] < opts.stride()[i] || opts.output_padding()[i] < opts.dilation()[i]),
              "ConvTranspose2d: output_padding ", opts.output_padding().pair_repr(),
              " must be non-negative and smaller than the stride ", opts.stride().pair_repr(), " or the dilation ",
              opts.dilation().pair_repr());
  weight =
      register_parameter("weight", empty({in_channels, out_channels / opts.groups(), kernel_size[0], kernel_size[1]}));
  if (opts.bias()) bias = register_parameter("bias", empty({out_channels}));
  // fan_in counts the weight's dim 1 (out / groups) times the kernel, as PyTorch's init does.
  init::default_linear_conv_init(weight.data(), opts.bias() ? bias.data() : Tensor());
}

std::shared_ptr<Module> ConvTranspose2d::clone() const {
  auto copy = std::make_shared<ConvTranspose2d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

Variable ConvTranspose2d::forward(const Variable& x) {
  Conv2dParams p;
  p.stride = opts_.stride(), p.padding = opts_.padding(), p.dilation = opts_.dilation(), p.groups = opts_.groups();
  return conv_transpose2d(x, weight, bias, p, opts_.output_padding());
}

std::string ConvTranspose2d::extra_repr() const {
  std::ostringstream os;
  os << opts_.in_channels() << ", " << opts_.out_channels() << ", kernel_size=" << opts_.kernel_size().pair_repr()
     << ", stride=" << opts_.stride().pair_repr();
  if (!opts_.padding().all(0)) os << ", padding=" << opts_.padding().pair_repr();
  if (!opts_.output_padding().all(0)) os << ", output_padding=" << opts_.output_padding().pair_repr();
  if (!opts_.dilation().all(1)) os << ", dilation=" << opts_.dilation().pair_repr();
  if (opts_.groups() != 1) os << ", groups=" << opts_.groups();
  if (!opts_.bias()) os << ", bias=False";
  return os.str();
}

}  // namespace ddl::nn
