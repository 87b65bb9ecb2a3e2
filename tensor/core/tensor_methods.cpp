// Tensor's method forms (x.sum(), x.sort(), x.eq(y), ...): each forwards to the
// free function of the same op, qualified with ddl:: because inside a member
// the unqualified name would find the member itself.
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/extreme.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/scan.h>
#include <ddl/tensor/ops/softmax.h>
#include <ddl/tensor/ops/sort.h>

namespace ddl {

Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return ddl::sum(*this, dims, keepdim); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const { return ddl::mean(*this, dims, keepdim); }
Tensor Tensor::max() const { return detail::extreme(*this, {}, false, true, false, "max"); }
Tensor Tensor::min() const { return detail::extreme(*this, {}, false, false, false, "min"); }
ValuesIndices<Tensor> Tensor::max(int64_t dim, bool keepdim) const { return max_dim(*this, dim, keepdim); }
ValuesIndices<Tensor> Tensor::min(int64_t dim, bool keepdim) const { return min_dim(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return ddl::argmax(reshape({-1}), 0); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return ddl::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin() const { return ddl::argmin(reshape({-1}), 0); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const { return ddl::argmin(*this, dim, keepdim); }
Tensor Tensor::abs() const { return ddl::abs(*this); }
Tensor Tensor::neg() const { return ddl::neg(*this); }
Tensor Tensor::exp() const { return ddl::exp(*this); }
Tensor Tensor::log() const { return ddl::log(*this); }
Tensor Tensor::sqrt() const { return ddl::sqrt(*this); }
Tensor Tensor::pow(double exponent) const { return ddl::pow(*this, exponent); }
Tensor Tensor::relu() const { return ddl::relu(*this); }
Tensor Tensor::sigmoid() const { return ddl::sigmoid(*this); }
Tensor Tensor::tanh() const { return ddl::tanh(*this); }
Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max) const { return ddl::clamp(*this, min, max); }
Tensor Tensor::matmul(const Tensor& other) const { return ddl::matmul(*this, other); }
Tensor Tensor::softmax(int64_t dim) const { return ddl::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ddl::log_softmax(*this, dim); }
Tensor Tensor::cumsum(int64_t dim) const { return ddl::cumsum(*this, dim); }
ValuesIndices<Tensor> Tensor::sort(int64_t dim, bool descending, bool stable) const {
  return ddl::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return ddl::argsort(*this, dim, descending, stable);
}
ValuesIndices<Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ddl::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::eq(const Tensor& other) const { return ddl::eq(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return ddl::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return ddl::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return ddl::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return ddl::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return ddl::ge(*this, other); }
Tensor Tensor::eq(double other) const { return ddl::eq(*this, other); }
Tensor Tensor::ne(double other) const { return ddl::ne(*this, other); }
Tensor Tensor::lt(double other) const { return ddl::lt(*this, other); }
Tensor Tensor::le(double other) const { return ddl::le(*this, other); }
Tensor Tensor::gt(double other) const { return ddl::gt(*this, other); }
Tensor Tensor::ge(double other) const { return ddl::ge(*this, other); }

}  // namespace ddl
