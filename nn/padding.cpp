// The padding layers' checks and repr (nn/padding.h).
#include <sstream>

#include <ddl/nn/padding.h>

namespace ddl::nn {

PadLayer::PadLayer(const char* type_name, int dims, PadMode mode, std::vector<int64_t> padding, double value)
    : Module(type_name), dims_(dims), mode_(mode), padding_(std::move(padding)), value_(value) {
  DDL_CHECK(static_cast<int>(padding_.size()) == 2 * dims, type_name, ": padding must be one number or ", 2 * dims,
            " numbers, got ", padding_.size());
}

Variable PadLayer::forward(const Variable& x) {
  // PyTorch 1.13's reflect and replicate kernels take [C, *] or [N, C, *] over the padded dims.
  if (mode_ != PadMode::Constant)
    DDL_CHECK(x.dim() == dims_ + 1 || x.dim() == dims_ + 2, type_name(), ": expected a ", dims_ + 1, "-D or ",
              dims_ + 2, "-D input, got ", x.shape());
  else
    DDL_CHECK(x.dim() >= dims_, type_name(), ": padding ", 2 * dims_, " numbers needs an input of at least ", dims_,
              " dims, got ", x.shape());
  return pad(x, padding_, mode_, value_);
}

std::string PadLayer::extra_repr() const {
  std::ostringstream os;
  const bool constant = mode_ == PadMode::Constant && type_name() != "ZeroPad2d";
  os << (constant ? "padding=(" : "(");
  for (size_t i = 0; i < padding_.size(); ++i) os << (i ? ", " : "") << padding_[i];
  os << ")";
  if (constant) os << ", value=" << value_;
  return os.str();
}

}  // namespace ddl::nn
