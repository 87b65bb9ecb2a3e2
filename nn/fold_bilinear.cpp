// Fold, Unfold (nn/fold.h), Bilinear and EmbeddingBag (nn/bilinear.h): initialisation and repr.
#include <cmath>
#include <sstream>

#include <ddl/nn/bilinear.h>
#include <ddl/nn/fold.h>
#include <ddl/nn/init.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

std::string Unfold::extra_repr() const {
  return "kernel_size=" + options_.kernel_size().repr() + ", dilation=" + options_.dilation().repr() +
         ", padding=" + options_.padding().repr() + ", stride=" + options_.stride().repr();
}

std::string Fold::extra_repr() const {
  return "output_size=" + options_.output_size().repr() + ", kernel_size=" + options_.kernel_size().repr() +
         ", dilation=" + options_.dilation().repr() + ", padding=" + options_.padding().repr() +
         ", stride=" + options_.stride().repr();
}

Bilinear::Bilinear(const BilinearOptions& options) : Cloneable("Bilinear"), options_(options) {
  DDL_CHECK(options.in1_features() > 0 && options.in2_features() > 0 && options.out_features() > 0,
            "Bilinear: feature sizes must be positive, got ", options.in1_features(), ", ", options.in2_features(),
            ", ", options.out_features());
  reset();
}

void Bilinear::reset() {
  const auto& o = options_;
  weight = register_parameter("weight", empty({o.out_features(), o.in1_features(), o.in2_features()}));
  bias = o.bias() ? register_parameter("bias", empty({o.out_features()})) : Variable();
  const double bound = 1.0 / std::sqrt(static_cast<double>(o.in1_features()));
  init::uniform_(weight.data(), -bound, bound);
  if (bias.defined()) init::uniform_(bias.data(), -bound, bound);
}

Variable Bilinear::forward(const Variable&) {
  DDL_CHECK(false, "Bilinear: forward takes two inputs, forward(x1, x2)");
  return {};
}

std::string Bilinear::extra_repr() const {
  std::ostringstream os;
  os << "in1_features=" << options_.in1_features() << ", in2_features=" << options_.in2_features()
     << ", out_features=" << options_.out_features() << ", bias=" << (options_.bias() ? "True" : "False");
  return os.str();
}

EmbeddingBag::EmbeddingBag(const EmbeddingBagOptions& options) : Cloneable("EmbeddingBag"), options_(options) {
  const int64_t num = options.num_embeddings();
  DDL_CHECK(num > 0 && options.embedding_dim() > 0, "EmbeddingBag: sizes must be positive, got ", num, ", ",
            options.embedding_dim());
  if (auto& p = options_.padding_idx()) {
    DDL_CHECK(*p >= -num && *p < num, "EmbeddingBag: padding_idx must be within num_embeddings, got ", *p);
    if (*p < 0) *p += num;
  }
  reset();
}

void EmbeddingBag::reset() {
  weight = register_parameter("weight", empty({options_.num_embeddings(), options_.embedding_dim()}));
  init::normal_(weight.data(), 0.0, 1.0);
  if (options_.padding_idx()) weight.data().select(0, *options_.padding_idx()).zero_();
}

Variable EmbeddingBag::forward(const Tensor& input, const Tensor& offsets, const Variable& per_sample_weights) {
  return embedding_bag(input, weight, offsets, options_.mode(), per_sample_weights, options_.include_last_offset(),
                       options_.padding_idx());
}

std::string EmbeddingBag::extra_repr() const {
  static const char* const kModes[] = {"sum", "mean", "max"};
  std::ostringstream os;
  os << options_.num_embeddings() << ", " << options_.embedding_dim()
     << ", mode=" << kModes[static_cast<int>(options_.mode())];
  if (options_.padding_idx()) os << ", padding_idx=" << *options_.padding_idx();
  return os.str();
}

}  // namespace ddl::nn
