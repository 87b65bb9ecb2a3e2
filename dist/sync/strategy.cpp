// make_sync_strategy: parses the --sync spec and builds the strategy. The strategies
// themselves live one per file next to this one.
#include "dist/sync/strategy.h"

#include <cctype>

#include "dist/sync/common.h"

namespace ddl::dist {

namespace {
constexpr const char* kSpecs = "ddp | allreduce | gather-scatter | ring | param-server | stepwise | local-sgd:K";

// "local-sgd:K" → K, or a clear error.
int parse_local_sgd_period(const std::string& spec) {
  const std::string k = spec.substr(std::string("local-sgd").size());
  DDL_CHECK(k.size() >= 2 && k[0] == ':', "make_sync_strategy: '", spec,
            "' needs the averaging period: local-sgd:K, e.g. local-sgd:4");
  bool digits = k.size() <= 10;
  for (size_t i = 1; i < k.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(k[i]));
  const long long period = digits ? std::stoll(k.substr(1)) : 0;
  DDL_CHECK(digits && period >= 1 && period <= 1'000'000'000, "make_sync_strategy: in '", spec,
            "', K must be a whole number of steps >= 1, e.g. local-sgd:4");
  return static_cast<int>(period);
}
}  // namespace

std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& spec, std::shared_ptr<nn::Module> model,
                                                 std::shared_ptr<ProcessGroup> group) {
  // Parse first, so a typo is reported before anything touches the network.
  enum class Kind { DDP, AllReduce, GatherScatter, Ring, ParamServer, Stepwise, LocalSGD } kind;
  int period = 0;
  if (spec == "ddp") kind = Kind::DDP;
  else if (spec == "allreduce") kind = Kind::AllReduce;
  else if (spec == "gather-scatter") kind = Kind::GatherScatter;
  else if (spec == "ring") kind = Kind::Ring;
  else if (spec == "param-server") kind = Kind::ParamServer;
  else if (spec == "stepwise") kind = Kind::Stepwise;
  else if (spec.rfind("local-sgd", 0) == 0) kind = Kind::LocalSGD, period = parse_local_sgd_period(spec);
  else DDL_CHECK(false, "make_sync_strategy: unknown sync strategy '", spec, "'; expected one of ", kSpecs);

  DDL_CHECK(model != nullptr && group != nullptr, "make_sync_strategy(", spec, "): a model and a process group are required");
  switch (kind) {
    case Kind::DDP: return detail::make_ddp_sync(std::move(model), std::move(group));
    case Kind::AllReduce: return detail::make_allreduce_sync(std::move(model), std::move(group));
    case Kind::GatherScatter: return detail::make_gather_scatter_sync(std::move(model), std::move(group));
    case Kind::Ring: return detail::make_ring_sync(std::move(model), std::move(group));
    case Kind::ParamServer: return detail::make_param_server_sync(std::move(model), std::move(group));
    case Kind::Stepwise: return detail::make_stepwise_sync(std::move(model), std::move(group));
    case Kind::LocalSGD: return detail::make_local_sgd_sync(std::move(model), std::move(group), period);
  }
  DDL_ASSERT(false, "unhandled sync strategy kind");
}

}  // namespace ddl::dist
