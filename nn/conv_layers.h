// Conv1d and ConvTranspose2d modules (Conv2d is in nn/layers.h). Constructors
// take PyTorch's arguments or LibTorch's options (Conv1dOptions(3, 4, 3).padding(1)), and initialise
// as PyTorch does (kaiming_uniform(a = sqrt(5)) weight, U(±1/sqrt(fan_in)) bias).
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

struct Conv1dOptions {
  Conv1dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  DDL_ARG(int64_t, in_channels);
  DDL_ARG(int64_t, out_channels);
  DDL_ARG(int64_t, kernel_size);
  DDL_ARG(int64_t, stride) = 1;
  DDL_ARG(int64_t, padding) = 0;
  DDL_ARG(int64_t, dilation) = 1;
  DDL_ARG(int64_t, groups) = 1;
  DDL_ARG(bool, bias) = true;
};

// x: [N, in, L] or [in, L] -> [N, out, Lout]; weight [out, in / groups, k].
class Conv1d : public Module {
 public:
  explicit Conv1d(const Conv1dOptions& opts);
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : Conv1d(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;

 private:
  Conv1dOptions opts_;
};

// PyTorch's argument order: stride, padding, output_padding, groups, bias, dilation.
struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  DDL_ARG(int64_t, in_channels);
  DDL_ARG(int64_t, out_channels);
  DDL_ARG(Size2, kernel_size);
  DDL_ARG(Size2, stride) = 1;
  DDL_ARG(Size2, padding) = 0;
  DDL_ARG(Size2, output_padding) = 0;
  DDL_ARG(int64_t, groups) = 1;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(Size2, dilation) = 1;
};

// x: [N, in, H, W] -> [N, out, (H - 1) s - 2 p + d (k - 1) + output_padding + 1, ...];
// weight [in, out / groups, kh, kw].
class ConvTranspose2d : public Module {
 public:
  explicit ConvTranspose2d(const ConvTranspose2dOptions& opts);
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : ConvTranspose2d(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;

 private:
  ConvTranspose2dOptions opts_;
};

}  // namespace ddl::nn
