// train_cifar's DDP bucket sizes (apps/train_cifar/buckets.h).
#include "apps/train_cifar/buckets.h"

#include <cstdio>
#include <cstdlib>

#include <ddl/base/error.h>
#include <ddl/dist/ddp/ddp_env.h>

namespace ddl::apps {

namespace {
// "1", "0.5", "25": the size as the user would write it back.
std::string mb_text(double mb) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", mb);
  return buf;
}

std::string source(double flag, const char* flag_name, const char* var) {
  if (flag > 0) return flag_name;
  const char* v = std::getenv(var);
  return v && *v ? var : "default";
}
}  // namespace

std::string bucket_flag_problem(std::string& value) {
  double mb = 0;
  return dist::parse_bucket_mb(value, value, mb);
}

std::string apply_bucket_flags(const TrainOptions& o) {
  if (o.bucket_cap_mb > 0) setenv(dist::kBucketCapEnv, mb_text(o.bucket_cap_mb).c_str(), /*overwrite=*/1);
  if (o.first_bucket_mb > 0) setenv(dist::kFirstBucketEnv, mb_text(o.first_bucket_mb).c_str(), 1);
  try {
    (void)dist::ddp_options_from_env();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string describe_buckets(const TrainOptions& o) {
  const dist::DDPOptions d = dist::ddp_options_from_env();
  char buf[256];
  std::snprintf(buf, sizeof buf, "ddp buckets: first %g MiB (%s), then %g MiB (%s)", d.first_bucket_mb,
                source(o.first_bucket_mb, "--first-bucket-mb", dist::kFirstBucketEnv).c_str(), d.bucket_cap_mb,
                source(o.bucket_cap_mb, "--bucket-cap-mb", dist::kBucketCapEnv).c_str());
  return buf;
}

std::string bucket_layout(const std::vector<int64_t>& bucket_bytes) {
  std::string s = std::to_string(bucket_bytes.size()) + (bucket_bytes.size() == 1 ? " bucket of " : " buckets of ");
  for (size_t i = 0; i < bucket_bytes.size(); ++i) s += (i ? ", " : "") + std::to_string(bucket_bytes[i]);
  return s + " bytes";
}

}  // namespace ddl::apps
