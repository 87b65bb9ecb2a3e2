// A CLI11 check for floating-point flags: a finite number in [min, max]. CLI::Range tests
// `val < min || val > max`, and every comparison with NaN is false, so "nan" passes it; "inf"
// passes a range whose end is infinite, and "1e300" one that was never given. Every
// floating-point option of ddlrun, train_cifar, sync_study and ddl-grade uses this instead,
// with CLI11's own wording, so a bad value is a usage error naming the flag (exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace ddl::apps {

class FiniteRange : public CLI::Validator {
 public:
  FiniteRange(double min, double max) {
    std::ostringstream range;
    range << "[" << min << " - " << max << "]";
    description("FLOAT in " + range.str());
    func_ = [min, max, text = range.str()](std::string& input) {
      double v = 0;
      if (!CLI::detail::lexical_cast(input, v)) return "Value " + input + " is not a number";
      if (!std::isfinite(v)) return "Value " + input + " is not a finite number (allowed: " + text + ")";
      if (v < min || v > max) return "Value " + input + " not in range " + text;
      return std::string();
    };
  }
};

}  // namespace ddl::apps
