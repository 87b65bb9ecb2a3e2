// Initialisation formulas of torch.nn.init.
#include <cmath>

#include <ddl/nn/init.h>

namespace ddl::nn::init {

std::pair<int64_t, int64_t> fans(const Tensor& w) {
  DDL_CHECK(w.dim() >= 2, "init: fan in/out need a weight with at least 2 dims, got ", w.shape());
  const int64_t receptive = w.numel() / (w.size(0) * w.size(1));
  return {w.size(1) * receptive, w.size(0) * receptive};
}

double calculate_gain(Nonlinearity nl, double negative_slope) {
  switch (nl) {
    case Nonlinearity::Linear:
      return 1.0;
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3;
    case Nonlinearity::Relu:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyRelu:
      return std::sqrt(2.0 / (1 + negative_slope * negative_slope));
  }
  return 1.0;
}

void uniform_(const Tensor& t, double low, double high, Generator& gen) { ddl::uniform_(t, low, high, gen); }
void normal_(const Tensor& t, double mean, double std, Generator& gen) { ddl::normal_(t, mean, std, gen); }
void constant_(const Tensor& t, double value) { t.fill_(value); }

void xavier_uniform_(const Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = fans(t);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  init::uniform_(t, -bound, bound, gen);
}

void xavier_normal_(const Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = fans(t);
  init::normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)), gen);
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nl) {
  const auto [fan_in, fan_out] = fans(t);
  const double fan = static_cast<double>(mode == FanMode::FanIn ? fan_in : fan_out);
  return calculate_gain(nl, a) / std::sqrt(fan);
}
}  // namespace

void kaiming_uniform_(const Tensor& t, double a, FanMode mode, Nonlinearity nl, Generator& gen) {
  const double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nl);
  init::uniform_(t, -bound, bound, gen);
}

void kaiming_normal_(const Tensor& t, double a, FanMode mode, Nonlinearity nl, Generator& gen) {
  init::normal_(t, 0.0, kaiming_std(t, a, mode, nl), gen);
}

void default_linear_conv_init(const Tensor& weight, const Tensor& bias, Generator& gen) {
  kaiming_uniform_(weight, std::sqrt(5.0), FanMode::FanIn, Nonlinearity::LeakyRelu, gen);
  if (bias.defined()) {
    const double fan_in = static_cast<double>(fans(weight).first);
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(fan_in) : 0.0;
    init::uniform_(bias, -bound, bound, gen);
  }
}

}  // namespace ddl::nn::init
