// DDP's bucket sizes from the environment, as Horovod reads HOROVOD_FUSION_THRESHOLD:
// DDL_BUCKET_CAP_MB (PyTorch's bucket_cap_mb) and DDL_FIRST_BUCKET_MB (the small first
// bucket) override DDPOptions' defaults for DDP built by the "ddp" sync strategy, so a job
// can be tuned without a rebuild. It reads; the caller decides what wins over it.
#pragma once

#include <string>

#include <ddl/dist/ddp/ddp.h>

namespace ddl::dist {

inline constexpr const char* kBucketCapEnv = "DDL_BUCKET_CAP_MB";
inline constexpr const char* kFirstBucketEnv = "DDL_FIRST_BUCKET_MB";
// The largest bucket: 1 TiB keeps the size in bytes far inside int64.
inline constexpr double kMaxBucketMB = 1024.0 * 1024.0;

// "" when `mb` is a usable bucket size (finite, above 0, at most kMaxBucketMB), else why
// not, beginning with `what` ("--bucket-cap-mb 0: ...").
std::string bucket_mb_problem(const std::string& what, double mb);
// Parses `text` as a bucket size in MiB (a whole decimal number, nothing after it); "" and
// `mb` set when it is one, else why not, beginning with `what`.
std::string parse_bucket_mb(const std::string& what, const std::string& text, double& mb);

// `base` with DDL_BUCKET_CAP_MB and DDL_FIRST_BUCKET_MB applied where set and not empty.
// Throws ddl::Error naming the variable and its value when one is not a bucket size.
DDPOptions ddp_options_from_env(DDPOptions base = {});

}  // namespace ddl::dist
