// Printing helpers of the N-d pooling layers (the layers are header templates).
#include <sstream>

#include <ddl/nn/pool_nd_layers.h>

namespace ddl::nn::detail {

// A number as Python prints a float: 2.0, 1.5.
std::string pool_repr(const char* first, const std::string& v) {
  std::ostringstream os;
  const double d = std::stod(v);
  os << first << d;
  if (d == static_cast<double>(static_cast<int64_t>(d))) os << ".0";
  return os.str();
}

}  // namespace ddl::nn::detail
