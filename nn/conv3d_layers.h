// Conv3d, ConvTranspose1d and ConvTranspose3d modules (Conv1d and ConvTranspose2d
// are in nn/conv_layers.h), with LibTorch's option structs
// (Conv3dOptions(1, 4, 3).stride(2)) and a positional form (Conv3d(1, 4, 3)).
// Initialised as PyTorch does: kaiming_uniform(a = sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias.
#pragma once

#include <string>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

struct Conv3dOptions {
  Conv3dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  DDL_ARG(int64_t, in_channels);
  DDL_ARG(int64_t, out_channels);
  DDL_ARG(ExpandingArray<3>, kernel_size);
  DDL_ARG(ExpandingArray<3>, stride) = 1;
  DDL_ARG(ExpandingArray<3>, padding) = 0;
  DDL_ARG(ExpandingArray<3>, dilation) = 1;
  DDL_ARG(int64_t, groups) = 1;
  DDL_ARG(bool, bias) = true;
};

// PyTorch's transposed convolutions: output_padding below the stride or the dilation.
template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  DDL_ARG(int64_t, in_channels);
  DDL_ARG(int64_t, out_channels);
  DDL_ARG(ExpandingArray<D>, kernel_size);
  DDL_ARG(ExpandingArray<D>, stride) = 1;
  DDL_ARG(ExpandingArray<D>, padding) = 0;
  DDL_ARG(ExpandingArray<D>, output_padding) = 0;
  DDL_ARG(int64_t, groups) = 1;
  DDL_ARG(bool, bias) = true;
  DDL_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// x: [N, in, D, H, W] or [in, D, H, W]; weight [out, in / groups, kd, kh, kw].
class Conv3d : public Module {
 public:
  explicit Conv3d(Conv3dOptions opts);
  Conv3d(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3d(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  const Conv3dOptions& options() const { return opts_; }
  Variable weight, bias;

 private:
  Conv3dOptions opts_;
};

// x: [N, in, *S] or [in, *S]; weight [in, out / groups, *kernel].
template <size_t D>
class ConvTransposeNd : public Module {
 public:
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  const ConvTransposeOptions<D>& options() const { return opts_; }
  Variable weight, bias;

 protected:
  ConvTransposeNd(const char* name, ConvTransposeOptions<D> opts);
  ConvTransposeOptions<D> opts_;
};

class ConvTranspose1d : public ConvTransposeNd<1> {
 public:
  explicit ConvTranspose1d(ConvTranspose1dOptions opts) : ConvTransposeNd("ConvTranspose1d", std::move(opts)) {}
  ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvTranspose1d(ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
  std::shared_ptr<Module> clone() const override;
};

class ConvTranspose3d : public ConvTransposeNd<3> {
 public:
  explicit ConvTranspose3d(ConvTranspose3dOptions opts) : ConvTransposeNd("ConvTranspose3d", std::move(opts)) {}
  ConvTranspose3d(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : ConvTranspose3d(ConvTranspose3dOptions(in_channels, out_channels, kernel_size)) {}
  std::shared_ptr<Module> clone() const override;
};

}  // namespace ddl::nn
