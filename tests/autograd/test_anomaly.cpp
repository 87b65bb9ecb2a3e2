// Anomaly detection: a NaN made in backward is reported at the node that made it, with
// the op's name, the input and its creation site; errors raised inside a backward get the
// creation site appended; the guard restores the previous setting; DDL_DETECT_ANOMALY=1
// turns it on in a fresh process. Off, backward runs as before and lets the NaN through.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/custom_function.h>
#include <ddl/autograd/functions.h>
#include <ddl/nn/nn.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using autograd::DetectAnomalyGuard;

namespace {
// log(0) * 0: the forward is NaN-free at the output's gradient, but LogBackward's
// gradient g / x is 0 / 0 = NaN for the zero element.
Variable log_times_zero(const Variable& x) { return sum(mul(log(x), Variable(zeros({2}, DType::Float64)))); }
}  // namespace

TEST_CASE("anomaly: off by default, a NaN gradient goes through silently", "[anomaly]") {
  REQUIRE_FALSE(autograd::is_anomaly_enabled());
  Variable x(from_vector<double>({0, 1}), true);
  log_times_zero(x).backward();
  REQUIRE(std::isnan(to_vector<double>(x.grad())[0]));
}

TEST_CASE("anomaly: the node that made a NaN is named with its creation site", "[anomaly]") {
  DetectAnomalyGuard anomaly;
  REQUIRE(autograd::is_anomaly_enabled());
  Variable x(from_vector<double>({0, 1}), true);
  const Variable y = log_times_zero(x);
  REQUIRE(y.grad_fn()->creation_site() != nullptr);
  try {
    y.backward();
    FAIL("no anomaly reported");
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    REQUIRE(msg.find("LogBackward returned NaN or Inf in the gradient for its input 0") != std::string::npos);
    REQUIRE(msg.find("op 'LogBackward'") != std::string::npos);
    REQUIRE(msg.find("was created at") != std::string::npos);
    REQUIRE(msg.find("#0 ") != std::string::npos);
    REQUIRE(msg.find("MulBackward returned") == std::string::npos);  // the multiply's gradients are finite
  }
  REQUIRE_FALSE(x.grad().defined());
  // A NaN handed to backward() is blamed on the caller, not on the op.
  Variable u(from_vector<double>({1, 2}), true);
  REQUIRE_THROWS_WITH(mul(u, 2.0).backward(from_vector<double>({std::nan(""), 1})),
                      Catch::Contains("its incoming gradient already held NaN or Inf"));
  // Infinity counts too: 1 / x at 0 in the backward of sqrt.
  Variable z(from_vector<double>({0, 4}), true);
  REQUIRE_THROWS_WITH(sum(sqrt(z)).backward(), Catch::Contains("SqrtBackward returned NaN or Inf"));
}

TEST_CASE("anomaly: the creation site names the module whose forward made the op", "[anomaly]") {
  // A layer that takes the log of its input, inside a Sequential: the NaN its backward makes
  // is reported with the module path "1" (the second child).
  struct LogLayer : nn::Module {
    LogLayer() : nn::Module("LogLayer") {}
    Variable forward(const Variable& x) override { return log(x); }
  };
  nn::Sequential net;
  net.push_back(std::make_shared<nn::ReLU>());
  net.push_back(std::make_shared<LogLayer>());
  DetectAnomalyGuard anomaly;
  Variable x(from_vector<double>({0, 2}), true);
  const Variable y = sum(mul(net.forward(x), Variable(zeros({2}, DType::Float64))));
  REQUIRE_THROWS_WITH(y.backward(), Catch::Contains("op 'LogBackward' created in module '1'"));
}

TEST_CASE("anomaly: the guard restores the previous setting", "[anomaly]") {
  {
    DetectAnomalyGuard on;
    {
      DetectAnomalyGuard off(false);
      REQUIRE_FALSE(autograd::is_anomaly_enabled());
      Variable x(from_vector<double>({1.0}), true);
      REQUIRE(exp(x).grad_fn()->creation_site() == nullptr);  // no site recorded while off
    }
    REQUIRE(autograd::is_anomaly_enabled());
  }
  REQUIRE_FALSE(autograd::is_anomaly_enabled());
}

TEST_CASE("anomaly: an error inside a backward names the op's creation site", "[anomaly]") {
  autograd::CustomFunction bad;
  bad.name = "shape_bug";
  bad.forward = [](autograd::FunctionCtx&, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    return {mul(in[0], 2.0)};
  };
  bad.backward = [](autograd::FunctionCtx&, const std::vector<Tensor>&) -> std::vector<Tensor> {
    return {zeros({1}, DType::Float64)};
  };
  DetectAnomalyGuard anomaly;
  Variable x(from_vector<double>({1, 2}), true);
  REQUIRE_THROWS_WITH(sum(bad.apply({x})[0]).backward(),
                      Catch::Contains("returned a gradient of shape [1]") &&
                          Catch::Contains("anomaly detection: the error was raised by the backward of op 'shape_bug'"));
}

TEST_CASE("anomaly: DDL_DETECT_ANOMALY=1 turns it on at start-up", "[anomaly]") {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  const std::string cmd = std::string("DDL_DETECT_ANOMALY=1 '") + self + "' '[.anomaly_env_child]' > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string off = std::string("DDL_DETECT_ANOMALY=0 '") + self + "' '[.anomaly_env_child]' > /dev/null 2>&1";
  REQUIRE(std::system(off.c_str()) != 0);  // the child's check fails when the variable says 0
}

TEST_CASE("anomaly env child", "[.anomaly_env_child]") {
  REQUIRE(autograd::is_anomaly_enabled());
  Variable x(from_vector<double>({0, 1}), true);
  REQUIRE_THROWS_WITH(log_times_zero(x).backward(), Catch::Contains("LogBackward returned NaN"));
}
