// fsdp as a synchronisation strategy (dist/sync/registry.h): train_cifar --sync fsdp.
#pragma once

#include <memory>

#include <ddl/dist/fsdp/fsdp.h>
#include <ddl/dist/sync/strategy.h>

namespace ddl::dist::detail {

std::unique_ptr<SyncStrategy> make_fsdp_sync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group);

}  // namespace ddl::dist::detail
