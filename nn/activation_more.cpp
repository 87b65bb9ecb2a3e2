// The members of nn/activation_more.h's modules that are not one-liners: argument checks
// (as the functions', at construction), PReLU's parameter, and extra_repr as PyTorch prints it.
#include <sstream>

#include <ddl/nn/activation_more.h>

namespace ddl::nn {

namespace {
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

std::string ELU::extra_repr() const { return "alpha=" + num(alpha_); }

CELU::CELU(double alpha) : Cloneable("CELU"), alpha_(alpha) { DDL_CHECK(alpha != 0.0, "CELU: alpha cannot be 0"); }
std::string CELU::extra_repr() const { return "alpha=" + num(alpha_); }

Hardtanh::Hardtanh(double min_val, double max_val) : Cloneable("Hardtanh"), min_(min_val), max_(max_val) {
  // torch.nn.Hardtanh asserts this; the function itself accepts any pair (as clamp).
  DDL_CHECK(max_val > min_val, "Hardtanh: max_val (", max_val, ") must be greater than min_val (", min_val, ")");
}
std::string Hardtanh::extra_repr() const { return "min_val=" + num(min_) + ", max_val=" + num(max_); }

std::string Hardshrink::extra_repr() const { return num(lambd_); }

Softshrink::Softshrink(double lambd) : Cloneable("Softshrink"), lambd_(lambd) {
  DDL_CHECK(lambd >= 0, "Softshrink: lambda must be greater or equal to 0, but found to be ", lambd);
}
std::string Softshrink::extra_repr() const { return num(lambd_); }

std::string Threshold::extra_repr() const { return "threshold=" + num(threshold_) + ", value=" + num(value_); }

PReLU::PReLU(int64_t num_parameters, double init) : Cloneable("PReLU"), num_(num_parameters), init_(init) {
  DDL_CHECK(num_parameters > 0, "PReLU: num_parameters must be positive, got ", num_parameters);
  reset();
}

void PReLU::reset() { weight = register_parameter("weight", full({num_}, init_)); }

RReLU::RReLU(double lower, double upper, Generator* gen) : Cloneable("RReLU"), lower_(lower), upper_(upper), gen_(gen) {
  DDL_CHECK(lower <= upper, "RReLU: lower bound ", lower, " should be less than or equal to the upper bound ", upper);
}
std::string RReLU::extra_repr() const { return "lower=" + num(lower_) + ", upper=" + num(upper_); }

Unflatten::Unflatten(int64_t dim, std::vector<int64_t> sizes)
    : Cloneable("Unflatten"), dim_(dim), sizes_(std::move(sizes)) {
  DDL_CHECK(!sizes_.empty(), "Unflatten: sizes must not be empty");
}

Variable Unflatten::forward(const Variable& x) {
  const int64_t nd = x.dim();
  DDL_CHECK(dim_ >= -nd && dim_ < nd, "Unflatten: dim ", dim_, " out of range for input ", x.shape());
  const int64_t d = dim_ < 0 ? dim_ + nd : dim_;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if (sizes_[i] == -1) {
      DDL_CHECK(infer < 0, "Unflatten: only one size may be -1");
      infer = static_cast<int64_t>(i);
    } else {
      DDL_CHECK(sizes_[i] >= 0, "Unflatten: sizes must be non-negative or -1, got ", sizes_[i]);
      known *= sizes_[i];
    }
  }
  std::vector<int64_t> sizes = sizes_;
  if (infer >= 0 && known != 0) sizes[static_cast<size_t>(infer)] = x.size(d) / known;
  int64_t prod = 1;
  for (int64_t s : sizes) prod *= s;
  DDL_CHECK(prod == x.size(d), "Unflatten: sizes must multiply to the size of dim ", d, " of input ", x.shape());
  std::vector<int64_t> shape(x.shape().begin(), x.shape().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  return x.reshape(Shape(shape));
}

std::string Unflatten::extra_repr() const {
  std::ostringstream os;
  os << "dim=" << dim_ << ", unflattened_size=(";
  for (size_t i = 0; i < sizes_.size(); ++i) os << (i ? ", " : "") << sizes_[i];
  os << (sizes_.size() == 1 ? ",)" : ")");
  return os.str();
}

}  // namespace ddl::nn
