// The dropout variants' shared constructor and repr (nn/dropout_more.h).
#include <sstream>

#include <ddl/nn/dropout_more.h>

namespace ddl::nn {

DropoutVariant::DropoutVariant(const char* type_name, Fn fn, double p, Generator* gen)
    : Module(type_name), fn_(fn), p_(p), gen_(gen) {
  DDL_CHECK(p >= 0 && p <= 1, type_name, ": dropout probability has to be between 0 and 1, but got ", p);
}

std::string DropoutVariant::extra_repr() const {
  std::ostringstream os;
  os << "p=" << p_ << ", inplace=False";
  return os.str();
}

}  // namespace ddl::nn
