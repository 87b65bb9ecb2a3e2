// The few activation-module members that are not one-liners.
#include <sstream>

#include <ddl/nn/activation.h>

namespace ddl::nn {

GELU::GELU(std::string approximate) : Cloneable("GELU"), approximate_(std::move(approximate)) {
  DDL_CHECK(approximate_ == "none" || approximate_ == "tanh", "GELU: approximate must be 'none' or 'tanh', got '",
            approximate_, "'");
}

std::string LeakyReLU::extra_repr() const {
  std::ostringstream os;
  os << "negative_slope=" << slope_;
  return os.str();
}

}  // namespace ddl::nn
