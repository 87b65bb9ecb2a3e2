// Fold and Unfold (torch.nn's): col2im and im2col of autograd/ops/fold.h with fixed sizes.
// They hold no parameters or buffers, so a copy is a deep copy.
#pragma once

#include <ddl/autograd/ops/fold.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

struct UnfoldOptions {
  UnfoldOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: LibTorch's form
  DDL_ARG(Size2, kernel_size);
  DDL_ARG(Size2, dilation) = 1;
  DDL_ARG(Size2, padding) = 0;
  DDL_ARG(Size2, stride) = 1;
};

struct FoldOptions {
  FoldOptions(Size2 output_size, Size2 kernel_size) : output_size_(output_size), kernel_size_(kernel_size) {}
  DDL_ARG(Size2, output_size);
  DDL_ARG(Size2, kernel_size);
  DDL_ARG(Size2, dilation) = 1;
  DDL_ARG(Size2, padding) = 0;
  DDL_ARG(Size2, stride) = 1;
};

// [N, C, H, W] -> [N, C * kh * kw, L]: every kernel-sized block as a column.
class Unfold : public Module {
 public:
  Unfold(const UnfoldOptions& options) : Module("Unfold"), options_(options) {}  // NOLINT: LibTorch's form
  explicit Unfold(Size2 kernel_size, Size2 dilation = 1, Size2 padding = 0, Size2 stride = 1)
      : Unfold(UnfoldOptions(kernel_size).dilation(dilation).padding(padding).stride(stride)) {}
  Variable forward(const Variable& x) override {
    return unfold(x, options_.kernel_size(), options_.dilation(), options_.padding(), options_.stride());
  }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<Unfold>(*this); }

 private:
  UnfoldOptions options_;
};

// [N, C * kh * kw, L] -> [N, C, H, W]: sums each column back into its block.
class Fold : public Module {
 public:
  Fold(const FoldOptions& options) : Module("Fold"), options_(options) {}  // NOLINT: LibTorch's form
  Fold(Size2 output_size, Size2 kernel_size, Size2 dilation = 1, Size2 padding = 0, Size2 stride = 1)
      : Fold(FoldOptions(output_size, kernel_size).dilation(dilation).padding(padding).stride(stride)) {}
  Variable forward(const Variable& x) override {
    return fold(x, options_.output_size(), options_.kernel_size(), options_.dilation(), options_.padding(),
                options_.stride());
  }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<Fold>(*this); }

 private:
  FoldOptions options_;
};

}  // namespace ddl::nn
