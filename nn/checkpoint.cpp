// Module state <-> safetensors.
#include <cmath>

#include <ddl/nn/checkpoint.h>
#include <ddl/nn/safetensors.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

void save_state(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, v] : module.named_state()) tensors.emplace_back(name, v.data());
  save_safetensors(path, tensors, metadata);
}

std::pair<int64_t, int64_t> count_nonfinite(const Tensor& t) {
  if (!is_floating(t.dtype())) return {0, 0};
  int64_t nan = 0, inf = 0;
  for (double v : to_vector<double>(t)) {
    nan += std::isnan(v);
    inf += std::isinf(v);
  }
  return {nan, inf};
}

std::map<std::string, std::string> load_state(Module& module, const std::string& path, bool strict,
                                              bool allow_nonfinite) {
  const TensorFile file = load_safetensors(path);
  std::map<std::string, Tensor> by_name(file.tensors.begin(), file.tensors.end());
  const auto state = module.named_state();
  // Check everything first so a failed load leaves the module untouched.
  for (const auto& [name, v] : state) {
    auto it = by_name.find(name);
    DDL_CHECK(it != by_name.end(), "load_state: ", path, " has no tensor '", name, "' (the model expects ",
              describe(v.data()), ")");
    const Tensor& t = it->second;
    DDL_CHECK(t.shape() == v.shape(), "load_state: ", path, ": tensor '", name, "' has shape ", t.shape(),
              " but the model expects ", v.shape());
    DDL_CHECK(t.dtype() == v.dtype() || (is_floating(t.dtype()) && is_floating(v.dtype())), "load_state: ", path,
              ": tensor '", name, "' is ", t.dtype(), " but the model expects ", v.dtype());
    // Checked as the model will hold it: float64's 1e300 is float32's +inf.
    if (!allow_nonfinite) {
      const auto [nan, inf] = count_nonfinite(t.to(v.dtype()));
      DDL_CHECK(nan + inf == 0, "load_state: ", path, ": tensor '", name, "' holds ", nan, " NaN and ", inf,
                " infinite values (of ", t.numel(), ")",
                t.dtype() == v.dtype() ? std::string()
                                       : std::string(" as ") + dtype_name(v.dtype()) +
                                             ", the model's dtype (the file's is " + dtype_name(t.dtype()) + ")",
                ": the weights of a diverged run? Refused unless loading with allow_nonfinite "
                "(train_cifar --allow-nonfinite)");
    }
  }
  if (strict) {
    for (const auto& [name, t] : file.tensors) {
      bool known = false;
      for (const auto& [n, v] : state) known = known || n == name;
      DDL_CHECK(known, "load_state: ", path, " holds '", name,
                "', which the model does not have (pass strict=false to ignore)");
    }
  }
  for (const auto& [name, v] : state) v.data().copy_(by_name.at(name));
  return file.metadata;
}

}  // namespace ddl::nn
