// train_cifar's DDP bucket sizes: --bucket-cap-mb and --first-bucket-mb, else
// DDL_BUCKET_CAP_MB and DDL_FIRST_BUCKET_MB, else DDPOptions' 25 and 1 MiB. The flags
// reach the ddp strategy through those variables (dist/ddp/ddp_env.h), so the flag wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/train_cifar/options.h"

namespace ddl::apps {

// A bucket flag's value: "" when it is a size in MiB above 0, else why not (CLI11's check).
std::string bucket_flag_problem(std::string& value);
// Puts the flags given into the environment and checks the variables; "" or the problem
// (naming the variable and its value). Call once, before the strategy is made.
std::string apply_bucket_flags(const TrainOptions& o);
// For the run header: "ddp buckets: first 1 MiB (default), then 25 MiB (DDL_BUCKET_CAP_MB)".
std::string describe_buckets(const TrainOptions& o);
// "3 buckets of 1048576, 5242880, 1536 bytes" (DDPStats::bucket_bytes, in launch order).
std::string bucket_layout(const std::vector<int64_t>& bucket_bytes);

}  // namespace ddl::apps
