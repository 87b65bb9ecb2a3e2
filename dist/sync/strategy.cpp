// make_sync_strategy, and the built-in strategies' entries in the registry (registry.h).
// The strategies themselves live one per file next to this one.
#include <algorithm>

#include <ddl/dist/fsdp/fsdp_sync.h>
#include <ddl/dist/sync/builtins.h>
#include <ddl/dist/sync/registry.h>
#include <ddl/dist/sync/strategy.h>
#include <ddl/dist/zero/zero_sync.h>

namespace ddl::dist {

namespace {
constexpr int64_t kMaxLocalSgdPeriod = 1000000;  // steps; beyond this the models would never be averaged

// "" when K is a whole number of steps in [1, kMaxLocalSgdPeriod]. Read digit by digit
// with a ceiling, so no K, however many digits, overflows the conversion.
std::string local_sgd_period_problem(const std::string& k) {
  int64_t period = 0;
  bool digits = !k.empty();
  for (char c : k) {
    digits = digits && c >= '0' && c <= '9';
    if (digits) period = std::min<int64_t>(period * 10 + (c - '0'), kMaxLocalSgdPeriod + 1);
  }
  if (digits && period >= 1 && period <= kMaxLocalSgdPeriod) return "";
  return "in 'local-sgd:" + k + "', K must be a whole number of steps between 1 and " +
         std::to_string(kMaxLocalSgdPeriod) + ", e.g. local-sgd:4";
}
// async-ps:S's bound, in clocks (Note [Stale-synchronous parallel] in async_ps.cpp).
std::string staleness_problem(const std::string& s) {
  if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos || std::stoi(s) > 1000)
    return "in 'async-ps:" + s + "', S must be a whole number of clocks between 0 and 1000, e.g. async-ps:2";
  return "";
}
}  // namespace

namespace detail {

void register_builtin_sync_strategies() {
  register_sync_strategy("ddp", make_ddp_sync, "DistributedDataParallel: bucketed all-reduce overlapped with backward");
  register_sync_strategy("allreduce", make_allreduce_sync, "one blocking all-reduce per gradient after backward");
  register_sync_strategy("gather-scatter", make_gather_scatter_sync,
                         "rank 0 gathers the gradients, averages and sends the average back (send/recv)");
  register_sync_strategy("ring", make_ring_sync, "hand-written ring all-reduce of the flattened gradients");
  register_sync_strategy("param-server", make_param_server_sync,
                         "rank 0 holds the weights and steps; workers push gradients, pull weights");
  // Model averaging: not the same updates as one process on the whole batch.
  register_sync_strategy(
      "stepwise",
      [](ModelPtr m, GroupPtr g, const std::string&) { return make_stepwise_sync(std::move(m), std::move(g)); },
      SyncStrategyInfo{.help = "rank k carries on with the mean of ranks 0..k's models", .averages_gradients = false});
  register_sync_strategy(
      "local-sgd",
      [](ModelPtr m, GroupPtr g, const std::string& k) {
        return make_local_sgd_sync(std::move(m), std::move(g), std::stoi(k));
      },
      SyncStrategyInfo{.help = "each rank steps alone; the models are averaged every K steps",
                       .averages_gradients = false,
                       .arg = "K",
                       .example = "local-sgd:4",
                       .check_arg = local_sgd_period_problem});
  // ZeRO stages 1 and 2 (dist/zero/, docs/sharded.md).
  register_sync_strategy(
      "zero1", [](ModelPtr m, GroupPtr g) { return make_zero_sync(std::move(m), std::move(g), 1); },
      "ZeRO stage 1: gradients reduce-scattered, each rank steps its shard with its optimizer state, all-gather");
  register_sync_strategy(
      "zero2", [](ModelPtr m, GroupPtr g) { return make_zero_sync(std::move(m), std::move(g), 2); },
      "ZeRO stage 2: as zero1, and each rank keeps only its shard's gradient, reduced bucket by bucket in backward");
  // After the original seven, so that their positions (and the tests listing them) stay.
  register_sync_strategy(
      "fsdp", make_fsdp_sync,
      "FullyShardedDataParallel (ZeRO-3): each rank keeps 1/N of the parameters, gathers a unit per use");
  register_sync_strategy(
      "async-ps",
      [](ModelPtr m, GroupPtr g, const std::string& s) {
        return make_async_ps_sync(std::move(m), std::move(g), std::stoi(s));
      },
      SyncStrategyInfo{.help = "parameter server without a barrier: workers run at most S clocks ahead of the slowest",
                       .averages_gradients = false,
                       .arg = "S",
                       .example = "async-ps:2",
                       .check_arg = staleness_problem});
}

}  // namespace detail

std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& spec, std::shared_ptr<nn::Module> model,
                                                 std::shared_ptr<ProcessGroup> group) {
  // Parse first, so a typo is reported before anything touches the network.
  const std::string problem = sync_spec_problem(spec);
  DDL_CHECK(problem.empty(), "make_sync_strategy: ", problem);
  DDL_CHECK(model != nullptr && group != nullptr, "make_sync_strategy(", spec,
            "): a model and a process group are required");
  const RegisteredSyncStrategy s = find_sync_strategy(spec);
  const std::string arg = spec.size() > s.name.size() ? spec.substr(s.name.size() + 1) : "";
  auto strategy = s.make(std::move(model), std::move(group), arg);
  DDL_CHECK(strategy != nullptr, "make_sync_strategy: the factory of '", spec, "' (", s.origin,
            ") returned no strategy");
  return strategy;
}

}  // namespace ddl::dist
