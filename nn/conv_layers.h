// Conv1d and ConvTranspose2d modules (Conv2d is in nn/layers.h). Constructors
// take PyTorch's arguments, options as designated initialisers, and initialise
// as PyTorch does (kaiming_uniform(a = sqrt(5)) weight, U(±1/sqrt(fan_in)) bias).
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>

namespace ddl::nn {

struct Conv1dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
};

// x: [N, in, L] or [in, L] -> [N, out, Lout]; weight [out, in / groups, k].
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Conv1dOptions opts = {});
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;

 private:
  int64_t in_, out_, k_;
  Conv1dOptions opts_;
};

// PyTorch's argument order: stride, padding, output_padding, groups, bias, dilation.
struct ConvTranspose2dOptions {
  Size2 stride = 1, padding = 0, output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  Size2 dilation = 1;
};

// x: [N, in, H, W] -> [N, out, (H - 1) s - 2 p + d (k - 1) + output_padding + 1, ...];
// weight [in, out / groups, kh, kw].
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, ConvTranspose2dOptions opts = {});
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;

 private:
  int64_t in_, out_;
  Size2 k_;
  ConvTranspose2dOptions opts_;
};

}  // namespace ddl::nn
