// Cross-check against PyTorch: ddl writes a VGG-11-BN state and an input in
// safetensors, tests/golden/torch_interop.py loads them into the same network
// in PyTorch 1.13 and writes back logits, loss, gradients and running stats,
// which must match ddl's. Exit 77 (meson: skipped) when python3-torch is absent.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include <ddl/ddl.h>

using namespace ddl;

namespace {
int failures = 0;
void expect_close(const std::string& what, const Tensor& ours, const Tensor& theirs, double rtol, double atol) {
  const bool ok =
      ours.shape() == theirs.shape() && allclose(ours.to(DType::Float64), theirs.to(DType::Float64), rtol, atol);
  const double diff =
      ours.shape() == theirs.shape() ? amax(abs(sub(ours.to(DType::Float64), theirs.to(DType::Float64)))).item() : -1;
  std::cout << (ok ? "ok   " : "FAIL ") << what << " (max abs diff " << diff << ")\n";
  failures += ok ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: test_nn_torch_interop tests/golden/torch_interop.py\n";
    return 2;
  }
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    std::cout << "python3-torch is not installed: skipping the PyTorch cross-check\n";
    return 77;
  }
  set_num_threads(1);
  const auto dir = std::filesystem::temp_directory_path() / ("ddl_interop_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.safetensors").string(), out = (dir / "out.safetensors").string();

  manual_seed(5);
  nn::VGG model(11, true, 10, 1);
  Generator gen(6);
  // Non-trivial running stats and affine parameters, so eval mode is really tested.
  for (auto& [name, v] : model.named_state())
    if (name.find("running_var") != std::string::npos)
      uniform_(v.data(), 0.5, 2.0, gen);
    else if (name.find("running_mean") != std::string::npos || name.find(".1.bias") != std::string::npos)
      normal_(v.data(), 0, 0.1, gen);
  const Tensor x = randn({4, 1, 32, 32}, gen);
  const Tensor y = from_vector<int64_t>({3, 1, 4, 1});
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (auto& [name, v] : model.named_state()) tensors.emplace_back(name, v.data());
  tensors.emplace_back("input.x", x);
  tensors.emplace_back("input.y", y);
  nn::save_safetensors(in, tensors);

  const std::string cmd = "/usr/bin/python3 '" + std::string(argv[1]) + "' '" + in + "' '" + out + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "FAIL: " << cmd << " did not succeed\n";
    return 1;
  }
  std::map<std::string, Tensor> ref;
  for (auto& [n, t] : nn::load_safetensors(out).tensors) ref[n] = t;

  model.eval();
  expect_close("eval logits", model(Variable(x)).data(), ref["eval_logits"], 1e-4, 1e-4);
  model.train();
  const Variable logits = model(Variable(x));
  const Variable loss = cross_entropy(logits, y);
  loss.backward();
  expect_close("train logits", logits.data(), ref["train_logits"], 1e-4, 1e-4);
  expect_close("loss", loss.data().reshape({1}), ref["loss"], 1e-5, 1e-5);
  auto feature = [&](int i) { return (*model.features)[static_cast<size_t>(i)]; };
  auto param = [&](int i, const char* name) {
    for (auto& [n, v] : feature(i)->named_parameters())
      if (n == name) return v;
    return Variable();
  };
  expect_close("grad features.0.weight", param(0, "weight").grad(), ref["grad.features.0.weight"], 1e-3, 1e-5);
  expect_close("grad features.1.weight", param(1, "weight").grad(), ref["grad.features.1.weight"], 1e-3, 1e-5);
  expect_close("grad classifier.weight", model.classifier->weight.grad(), ref["grad.classifier.weight"], 1e-3, 1e-5);
  auto bn = std::static_pointer_cast<nn::BatchNorm2d>(feature(1));
  expect_close("running_mean", bn->running_mean.data(), ref["features.1.running_mean"], 1e-4, 1e-6);
  expect_close("running_var", bn->running_var.data(), ref["features.1.running_var"], 1e-4, 1e-6);
  std::filesystem::remove_all(dir);
  std::cout << (failures ? "FAILED" : "all matched PyTorch") << "\n";
  return failures ? 1 : 0;
}
