// The zero1 and zero2 sync strategies (ZeRO stages 1 and 2 behind the SyncStrategy
// interface, registered in dist/sync/strategy.cpp): train_cifar --sync zero1|zero2.
#pragma once

#include <ddl/dist/sync/strategy.h>

namespace ddl::dist::detail {

// stage 1 or 2. Broadcasts rank 0's parameters and buffers; the sharded optimizer is
// built at the first step() from the app's optimizer (SGD, Adam or AdamW).
std::unique_ptr<SyncStrategy> make_zero_sync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group,
                                             int stage);

}  // namespace ddl::dist::detail
