// The closed-form inputs of the golden scripts (tests/golden/*.py): seq() is
// scale * sin(a * i + b) over the flat index, checksum() the script's
// sum(t * seq(t.shape, 0.1, 0.5)), plus an elementwise comparison helper.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <ddl/tensor/ops.h>

namespace ddl::test {

inline Tensor seq(const Shape& s, double a, double b, double scale = 1.0, DType dt = DType::Float64) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(a * double(i) + b);
  return from_vector(v, s).to(dt);
}

inline double checksum(const Tensor& t) {
  const std::vector<double> v = to_vector<double>(t.to(DType::Float64).contiguous());
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += v[i] * std::sin(0.1 * double(i) + 0.5);
  return s;
}

// Every element of t within atol + rtol |expect| of the golden values (NaN matches NaN).
inline void require_close(const Tensor& t, const std::vector<double>& expect, double rtol = 1e-9, double atol = 1e-10) {
  const std::vector<double> got = to_vector<double>(t.to(DType::Float64).contiguous());
  REQUIRE(got.size() == expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expect[i]);
    if (std::isnan(expect[i])) {
      REQUIRE(std::isnan(got[i]));
      continue;
    }
    REQUIRE(std::abs(got[i] - expect[i]) <= atol + rtol * std::abs(expect[i]));
  }
}

}  // namespace ddl::test
