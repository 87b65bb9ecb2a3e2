// The buckets and overlap checks of lab ddp-buckets (see ddp_checks.h).
#include "apps/grade/ddp_checks.h"

#include <algorithm>

namespace ddl::grade {

namespace {

const char* const kParamNames[] = {"W1", "b1", "W2", "b2"};

std::vector<int64_t> param_numels(const Case& c) { return {c.in * c.hidden, c.hidden, c.hidden * c.out, c.out}; }

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// "3 buckets of 33, 10, 60 floats ([b2 W2] [b1] [W1])"
std::string describe_buckets(const Case& c) {
  const auto buckets = handout_buckets(c);
  std::string members;
  for (const auto& b : buckets) {
    members += members.empty() ? "[" : " [";
    for (size_t k = 0; k < b.size(); ++k) members += (k ? " " : "") + std::string(kParamNames[b[k]]);
    members += "]";
  }
  return std::to_string(buckets.size()) + " bucket" + (buckets.size() == 1 ? "" : "s") + " of " +
         join(bucket_numels(c)) + " floats (" + members + ")";
}

}  // namespace

std::vector<std::vector<int64_t>> handout_buckets(const Case& c) {
  const auto numels = param_numels(c);
  std::vector<std::vector<int64_t>> buckets;
  int64_t filled = 0;
  for (int64_t i = static_cast<int64_t>(numels.size()) - 1; i >= 0; --i) {
    const int64_t bytes = numels[i] * 4;
    if (buckets.empty() || filled + bytes > c.cap) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += bytes;
  }
  return buckets;
}

std::vector<int64_t> bucket_numels(const Case& c) {
  const auto numels = param_numels(c);
  std::vector<int64_t> out;
  for (const auto& b : handout_buckets(c)) {
    int64_t n = 0;
    for (const int64_t i : b) n += numels[i];
    out.push_back(n);
  }
  return out;
}

Check check_buckets(const Case& c, const std::vector<nlohmann::json>& ranks, Check k) {
  const std::vector<int64_t> want = bucket_numels(c);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto& steps = ranks[r]["steps"];
    for (size_t s = 0; s < steps.size(); ++s) {
      std::vector<int64_t> got;
      for (const auto& call : steps[s]["all_reduce"]) got.push_back(call[0].get<int64_t>());
      if (got == want) continue;
      k.output = "rank " + std::to_string(r) + ", step " + std::to_string(s) + ": " +
                 (got.empty() ? std::string("no all_reduce was called")
                              : std::to_string(got.size()) + " all_reduce call" + (got.size() == 1 ? "" : "s") +
                                    " of " + join(got) + " floats") +
                 "; a cap of " + std::to_string(c.cap) + " bytes gives the handout's " + describe_buckets(c) +
                 ", one all_reduce each, in that order: fill the buckets from the last parameter to the first "
                 "and start a new one when the next parameter would pass the cap";
      return k;
    }
  }
  k.score = 1;
  k.output = "every step all-reduced the " + describe_buckets(c);
  return k;
}

Check check_overlap(const Case& c, const std::vector<nlohmann::json>& ranks, Check k) {
  const auto buckets = handout_buckets(c);
  const int64_t params = static_cast<int64_t>(param_numels(c).size());
  int graded = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto& steps = ranks[r]["steps"];
    for (size_t s = 0; s < steps.size(); ++s) {
      const auto arrivals = steps[s]["arrivals"].get<std::vector<int64_t>>();
      if (static_cast<int64_t>(arrivals.size()) != params) continue;  // the buckets check says why
      // Possible only when the first bucket is complete before the last gradient arrives.
      const auto& first = buckets.front();
      const bool possible = buckets.size() > 1 &&
                            std::none_of(first.begin(), first.end(), [&](int64_t p) { return p == arrivals.back(); });
      if (!possible) continue;
      ++graded;
      int64_t early = 0;
      for (const auto& call : steps[s]["all_reduce"])
        if (call[1].get<int64_t>() < params) ++early;
      if (early > 0) continue;
      k.output = "rank " + std::to_string(r) + ", step " + std::to_string(s) +
                 ": no all_reduce started before backward produced its last gradient (" + kParamNames[arrivals.back()] +
                 "'s), although the first bucket was full before that: start " +
                 "each bucket's all_reduce_async from the gradient hook that fills it, and only wait for them " +
                 "in after_backward()";
      return k;
    }
  }
  k.score = 1;
  k.output = graded > 0 ? "in every step an all_reduce started while backward still ran"
                        : "nothing to grade: with a cap of " + std::to_string(c.cap) + " bytes, the " +
                              describe_buckets(c) + " leave no bucket full before backward's last gradient";
  return k;
}

}  // namespace ddl::grade
