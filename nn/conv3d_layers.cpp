// Conv3d, ConvTranspose1d and ConvTranspose3d: parameter shapes, checks, forward, printing.
#include <sstream>
#include <vector>

#include <ddl/nn/conv3d_layers.h>
#include <ddl/nn/conv_checks.h>
#include <ddl/nn/init.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

namespace {
template <size_t D>
void check_kernel(const char* type, const ExpandingArray<D>& k) {
  for (size_t i = 0; i < D; ++i) DDL_CHECK(k[i] > 0, type, ": kernel_size must be positive, got ", k.tuple_repr());
}
}  // namespace

Conv3d::Conv3d(Conv3dOptions opts) : Module("Conv3d"), opts_(std::move(opts)) {
  const auto& o = opts_;
  detail::check_conv_channels("Conv3d", o.in_channels(), o.out_channels(), o.groups());
  check_kernel("Conv3d", o.kernel_size());
  const auto k = o.kernel_size();
  weight = register_parameter("weight", empty({o.out_channels(), o.in_channels() / o.groups(), k[0], k[1], k[2]}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  init::default_linear_conv_init(weight.data(), o.bias() ? bias.data() : Tensor());
}

std::shared_ptr<Module> Conv3d::clone() const {
  auto copy = std::make_shared<Conv3d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

Variable Conv3d::forward(const Variable& x) {
  return conv3d(x, weight, bias, opts_.stride(), opts_.padding(), opts_.dilation(), opts_.groups());
}

std::string Conv3d::extra_repr() const {
  const auto& o = opts_;
  std::ostringstream os;
  os << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << o.kernel_size().tuple_repr()
     << ", stride=" << o.stride().tuple_repr();
  if (!o.padding().all(0)) os << ", padding=" << o.padding().tuple_repr();
  if (!o.dilation().all(1)) os << ", dilation=" << o.dilation().tuple_repr();
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!o.bias()) os << ", bias=False";
  return os.str();
}

template <size_t D>
ConvTransposeNd<D>::ConvTransposeNd(const char* name, ConvTransposeOptions<D> opts)
    : Module(name), opts_(std::move(opts)) {
  const auto& o = opts_;
  detail::check_conv_channels(name, o.in_channels(), o.out_channels(), o.groups());
  check_kernel(name, o.kernel_size());
  for (size_t i = 0; i < D; ++i) {
    const int64_t op = o.output_padding()[i];
    DDL_CHECK(op >= 0 && (op < o.stride()[i] || op < o.dilation()[i]), name, ": output_padding ",
              o.output_padding().tuple_repr(), " must be non-negative and smaller than the stride ",
              o.stride().tuple_repr(), " or the dilation ", o.dilation().tuple_repr());
  }
  std::vector<int64_t> ws = {o.in_channels(), o.out_channels() / o.groups()};
  for (size_t i = 0; i < D; ++i) ws.push_back(o.kernel_size()[i]);
  weight = register_parameter("weight", empty(Shape(ws)));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  // fan_in counts the weight's dim 1 (out / groups) times the kernel, as PyTorch's init does.
  init::default_linear_conv_init(weight.data(), o.bias() ? bias.data() : Tensor());
}

template <size_t D>
Variable ConvTransposeNd<D>::forward(const Variable& x) {
  const auto& o = opts_;
  if constexpr (D == 1)
    return conv_transpose1d(x, weight, bias, o.stride()[0], o.padding()[0], o.output_padding()[0], o.groups(),
                            o.dilation()[0]);
  else
    return conv_transpose3d(x, weight, bias, o.stride(), o.padding(), o.output_padding(), o.groups(), o.dilation());
}

template <size_t D>
std::string ConvTransposeNd<D>::extra_repr() const {
  const auto& o = opts_;
  std::ostringstream os;
  os << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << o.kernel_size().tuple_repr()
     << ", stride=" << o.stride().tuple_repr();
  if (!o.padding().all(0)) os << ", padding=" << o.padding().tuple_repr();
  if (!o.output_padding().all(0)) os << ", output_padding=" << o.output_padding().tuple_repr();
  if (!o.dilation().all(1)) os << ", dilation=" << o.dilation().tuple_repr();
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!o.bias()) os << ", bias=False";
  return os.str();
}

template class ConvTransposeNd<1>;
template class ConvTransposeNd<3>;

std::shared_ptr<Module> ConvTranspose1d::clone() const {
  auto copy = std::make_shared<ConvTranspose1d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

std::shared_ptr<Module> ConvTranspose3d::clone() const {
  auto copy = std::make_shared<ConvTranspose3d>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace ddl::nn
