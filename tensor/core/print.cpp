// operator<< for tensors, in PyTorch's layout: nested brackets, aligned
// columns, and "..." in place of the middle of dims longer than 6 once the
// tensor has more than 1000 elements.
#include <cmath>
#include <iomanip>
#include <sstream>

#include <ddl/tensor/core/tensor.h>

namespace ddl {
namespace {

constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

std::string format_value(double v, DType t, int precision) {
  std::ostringstream os;
  if (!is_floating(t)) {
    if (t == DType::Bool) return v != 0 ? "True" : "False";
    os << static_cast<int64_t>(v);
  } else if (std::isnan(v)) {
    os << "nan";
  } else if (std::isinf(v)) {
    os << (v > 0 ? "inf" : "-inf");
  } else {
    os << std::fixed << std::setprecision(precision) << v;
  }
  return os.str();
}

struct Printer {
  const Tensor& t;  // contiguous float64 copy
  DType dtype;
  bool summarize;
  size_t width = 0;
  int precision = 4;

  std::vector<int64_t> indices(int64_t n) const {
    std::vector<int64_t> idx;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      idx.push_back(-1);  // the ellipsis
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void print(std::ostream& os, int64_t dim, int64_t offset, int indent) const {
    const double* p = t.data<double>();
    if (dim == t.dim()) {
      os << format_value(p[offset], dtype, precision);
      return;
    }
    os << '[';
    const auto idx = indices(t.size(dim));
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) {
        os << ',';
        if (dim == t.dim() - 1)
          os << ' ';
        else
          os << std::string(static_cast<size_t>(t.dim() - dim - 1), '\n')
             << std::string(static_cast<size_t>(indent + 1), ' ');
      }
      if (idx[k] < 0) {
        os << "...";
        continue;
      }
      if (dim == t.dim() - 1) {
        const std::string s = format_value(p[offset + idx[k] * t.stride(dim)], dtype, precision);
        os << std::string(width > s.size() ? width - s.size() : 0, ' ') << s;
      } else {
        print(os, dim + 1, offset + idx[k] * t.stride(dim), indent + 1);
      }
    }
    os << ']';
  }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  const Tensor c = t.to(Device::cpu()).to(DType::Float64).contiguous();
  Printer pr{c, t.dtype(), t.numel() > kSummarizeAbove};
  const double* p = c.data<double>();
  for (int64_t i = 0; i < c.numel(); ++i)
    pr.width = std::max(pr.width, format_value(p[i], t.dtype(), pr.precision).size());
  os << "tensor(";
  if (t.dim() == 0) {
    os << format_value(p[0], t.dtype(), pr.precision);
  } else {
    pr.print(os, 0, 0, 7);
  }
  os << ", dtype=" << t.dtype() << ", shape=" << t.shape();
  if (!t.device().is_cpu()) os << ", device=" << t.device();
  return os << ')';
}

}  // namespace ddl
