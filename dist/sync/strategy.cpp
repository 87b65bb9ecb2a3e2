// make_sync_strategy: parses the --sync spec and builds the strategy. The strategies
// themselves live one per file next to this one.
#include "dist/sync/strategy.h"

#include <cctype>
#include <functional>
#include <map>

#include "dist/sync/common.h"

namespace ddl::dist {

namespace {
constexpr const char* kSpecs = "ddp | allreduce | gather-scatter | ring | param-server | stepwise | local-sgd:K";

// "local-sgd:K" → K, or a clear error.
int parse_local_sgd_period(const std::string& spec) {
  const std::string k = spec.substr(std::string("local-sgd").size());
  DDL_CHECK(!k.empty() && k[0] == ':', "make_sync_strategy: '", spec,
            "' needs the averaging period: local-sgd:K, e.g. local-sgd:4");
  const std::string num = k.substr(1);
  bool digits = !num.empty() && num.size() <= 9;  // 9 digits: no overflow in int
  for (char c : num) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  const int period = digits ? std::stoi(num) : 0;
  DDL_CHECK(period >= 1, "make_sync_strategy: in '", spec,
            "', K must be a whole number of steps >= 1, e.g. local-sgd:4");
  return period;
}
}  // namespace

std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& spec, std::shared_ptr<nn::Module> model,
                                                 std::shared_ptr<ProcessGroup> group) {
  using Factory = std::function<std::unique_ptr<SyncStrategy>(detail::ModelPtr, detail::GroupPtr)>;
  static const std::map<std::string, Factory> kFactories = {
      {"ddp", detail::make_ddp_sync},
      {"allreduce", detail::make_allreduce_sync},
      {"gather-scatter", detail::make_gather_scatter_sync},
      {"ring", detail::make_ring_sync},
      {"param-server", detail::make_param_server_sync},
      {"stepwise", detail::make_stepwise_sync},
  };
  // Parse first, so a typo is reported before anything touches the network.
  Factory make;
  if (spec.rfind("local-sgd", 0) == 0) {
    const int k = parse_local_sgd_period(spec);
    make = [k](detail::ModelPtr m, detail::GroupPtr g) {
      return detail::make_local_sgd_sync(std::move(m), std::move(g), k);
    };
  } else {
    const auto it = kFactories.find(spec);
    DDL_CHECK(it != kFactories.end(), "make_sync_strategy: unknown sync strategy '", spec, "'; expected one of ",
              kSpecs);
    make = it->second;
  }
  DDL_CHECK(model != nullptr && group != nullptr, "make_sync_strategy(", spec,
            "): a model and a process group are required");
  return make(std::move(model), std::move(group));
}

}  // namespace ddl::dist
