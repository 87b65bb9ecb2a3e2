// The channel checks every convolution layer makes at construction, as PyTorch's _ConvNd.
#pragma once

#include <cstdint>

#include <ddl/base/error.h>

namespace ddl::nn::detail {

inline void check_conv_channels(const char* type, int64_t in, int64_t out, int64_t groups) {
  DDL_CHECK(in > 0 && out > 0, type, ": channels must be positive, got in=", in, " out=", out);
  DDL_CHECK(groups > 0 && in % groups == 0 && out % groups == 0, type, ": groups=", groups,
            " must divide in_channels=", in, " and out_channels=", out);
}

}  // namespace ddl::nn::detail
