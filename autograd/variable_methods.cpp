// Variable's method forms (x.sum(), x.sort(), x.eq(y), ...): each forwards to
// the free function of the same op, qualified with ddl:: because inside a
// member the unqualified name would find the member itself. x.max() and x.min()
// live beside amax in autograd/ops/reduce.cpp.
#include <ddl/autograd/ops/compare.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/scan.h>
#include <ddl/autograd/ops/softmax.h>
#include <ddl/autograd/ops/sort.h>
#include <ddl/autograd/variable.h>

namespace ddl {

Variable Variable::sum(const std::vector<int64_t>& dims, bool keepdim) const { return ddl::sum(*this, dims, keepdim); }
Variable Variable::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return ddl::mean(*this, dims, keepdim);
}
ValuesIndices<Variable> Variable::max(int64_t dim, bool keepdim) const { return max_dim(*this, dim, keepdim); }
ValuesIndices<Variable> Variable::min(int64_t dim, bool keepdim) const { return min_dim(*this, dim, keepdim); }
Variable Variable::abs() const { return ddl::abs(*this); }
Variable Variable::neg() const { return ddl::neg(*this); }
Variable Variable::exp() const { return ddl::exp(*this); }
Variable Variable::log() const { return ddl::log(*this); }
Variable Variable::sqrt() const { return ddl::sqrt(*this); }
Variable Variable::pow(double exponent) const { return ddl::pow(*this, exponent); }
Variable Variable::relu() const { return ddl::relu(*this); }
Variable Variable::sigmoid() const { return ddl::sigmoid(*this); }
Variable Variable::tanh() const { return ddl::tanh(*this); }
Variable Variable::clamp(std::optional<double> min, std::optional<double> max) const {
  return ddl::clamp(*this, min, max);
}
Variable Variable::matmul(const Variable& other) const { return ddl::matmul(*this, other); }
Variable Variable::softmax(int64_t dim) const { return ddl::softmax(*this, dim); }
Variable Variable::log_softmax(int64_t dim) const { return ddl::log_softmax(*this, dim); }
Variable Variable::cumsum(int64_t dim) const { return ddl::cumsum(*this, dim); }
ValuesIndices<Variable> Variable::sort(int64_t dim, bool descending, bool stable) const {
  return ddl::sort(*this, dim, descending, stable);
}
ValuesIndices<Variable> Variable::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ddl::topk(*this, k, dim, largest, sorted);
}
Tensor Variable::argsort(int64_t dim, bool descending, bool stable) const {
  return ddl::argsort(data(), dim, descending, stable);
}
Tensor Variable::argmax() const { return data().argmax(); }
Tensor Variable::argmax(int64_t dim, bool keepdim) const { return ddl::argmax(data(), dim, keepdim); }
Tensor Variable::argmin() const { return data().argmin(); }
Tensor Variable::argmin(int64_t dim, bool keepdim) const { return ddl::argmin(data(), dim, keepdim); }
Tensor Variable::eq(const Variable& other) const { return ddl::eq(data(), other.data()); }
Tensor Variable::ne(const Variable& other) const { return ddl::ne(data(), other.data()); }
Tensor Variable::lt(const Variable& other) const { return ddl::lt(data(), other.data()); }
Tensor Variable::le(const Variable& other) const { return ddl::le(data(), other.data()); }
Tensor Variable::gt(const Variable& other) const { return ddl::gt(data(), other.data()); }
Tensor Variable::ge(const Variable& other) const { return ddl::ge(data(), other.data()); }
Tensor Variable::eq(double other) const { return ddl::eq(data(), other); }
Tensor Variable::ne(double other) const { return ddl::ne(data(), other); }
Tensor Variable::lt(double other) const { return ddl::lt(data(), other); }
Tensor Variable::le(double other) const { return ddl::le(data(), other); }
Tensor Variable::gt(double other) const { return ddl::gt(data(), other); }
Tensor Variable::ge(double other) const { return ddl::ge(data(), other); }

}  // namespace ddl
