// One factory per built-in strategy, for their entries in the registry (strategy.cpp).
// Not installed: programs make strategies by name, through make_sync_strategy.
#pragma once

#include <ddl/dist/sync/common.h>

namespace ddl::dist::detail {

std::unique_ptr<SyncStrategy> make_ddp_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_allreduce_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_gather_scatter_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_ring_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_param_server_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_stepwise_sync(ModelPtr model, GroupPtr group);
std::unique_ptr<SyncStrategy> make_local_sgd_sync(ModelPtr model, GroupPtr group, int k);
std::unique_ptr<SyncStrategy> make_async_ps_sync(ModelPtr model, GroupPtr group, int staleness);

}  // namespace ddl::dist::detail
