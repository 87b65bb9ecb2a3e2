// Dropout1d/2d/3d, AlphaDropout and FeatureAlphaDropout (torch.nn's): the functions of
// autograd/ops/dropout_more.h in training mode, the identity in eval mode. They hold no
// parameters or buffers, so a copy is a deep copy. Dropout itself is in layers.h.
#pragma once

#include <ddl/autograd/ops/dropout_more.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/module.h>

namespace ddl::nn {

// The shared form: a drop function, its probability, and an optional generator (the
// default generator when null; the generator must outlive the layer).
class DropoutVariant : public Module {
 public:
  using Fn = Variable (*)(const Variable&, double, bool, Generator&);
  DropoutVariant(const char* type_name, Fn fn, double p, Generator* gen);
  Variable forward(const Variable& x) override { return fn_(x, p_, is_training(), gen_ ? *gen_ : default_generator()); }
  std::string extra_repr() const override;
  double p() const { return p_; }

 private:
  Fn fn_;
  double p_;
  Generator* gen_;
};

#define DDL_DROPOUT_VARIANT(Name, fn)                                                              \
  class Name : public DropoutVariant {                                                             \
   public:                                                                                         \
    explicit Name(double p = 0.5, Generator* gen = nullptr) : DropoutVariant(#Name, fn, p, gen) {} \
    explicit Name(const DropoutOptions& o) : Name(o.p()) {}                                        \
    std::shared_ptr<Module> clone() const override { return std::make_shared<Name>(*this); }       \
  }

DDL_DROPOUT_VARIANT(Dropout1d, dropout1d);
DDL_DROPOUT_VARIANT(Dropout2d, dropout2d);
DDL_DROPOUT_VARIANT(Dropout3d, dropout3d);
DDL_DROPOUT_VARIANT(AlphaDropout, alpha_dropout);
DDL_DROPOUT_VARIANT(FeatureAlphaDropout, feature_alpha_dropout);

#undef DDL_DROPOUT_VARIANT

}  // namespace ddl::nn
