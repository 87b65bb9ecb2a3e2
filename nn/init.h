// Parameter initialisation, as torch.nn.init. Every function fills the tensor
// in place from a Generator (default: ddl::default_generator()).
#pragma once

#include <ddl/tensor/core/random.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::nn::init {

enum class Nonlinearity { Linear, Relu, LeakyRelu, Tanh, Sigmoid };
enum class FanMode { FanIn, FanOut };

// fan_in = in_channels * receptive field, fan_out = out_channels * receptive field.
std::pair<int64_t, int64_t> fans(const Tensor& weight);
double calculate_gain(Nonlinearity nl, double negative_slope = 0.01);

void uniform_(const Tensor& t, double low, double high, Generator& gen = default_generator());
void normal_(const Tensor& t, double mean, double std, Generator& gen = default_generator());
void constant_(const Tensor& t, double value);
void xavier_uniform_(const Tensor& t, double gain = 1.0, Generator& gen = default_generator());
void xavier_normal_(const Tensor& t, double gain = 1.0, Generator& gen = default_generator());
// a: negative slope of the rectifier after this layer (LeakyRelu); PyTorch's default layers use a = sqrt(5).
void kaiming_uniform_(const Tensor& t, double a = 0, FanMode mode = FanMode::FanIn,
                      Nonlinearity nl = Nonlinearity::LeakyRelu, Generator& gen = default_generator());
void kaiming_normal_(const Tensor& t, double a = 0, FanMode mode = FanMode::FanIn,
                     Nonlinearity nl = Nonlinearity::LeakyRelu, Generator& gen = default_generator());

// PyTorch's default for Linear and Conv2d: kaiming_uniform_(a = sqrt(5)) on the
// weight and U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias (if defined).
void default_linear_conv_init(const Tensor& weight, const Tensor& bias, Generator& gen = default_generator());

}  // namespace ddl::nn::init
