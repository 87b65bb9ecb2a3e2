// ddl::dist in one include: stores, process groups, init_process_group.
#pragma once

#include <ddl/dist/ddp/ddp.h>
#include <ddl/dist/env.h>
#include <ddl/dist/fsdp/fsdp.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/dist/hooks/powersgd.h>
#include <ddl/dist/init.h>
#include <ddl/dist/nn/sync_batch_norm.h>
#include <ddl/dist/process_group.h>
#include <ddl/dist/store/file_store.h>
#include <ddl/dist/store/store.h>
#include <ddl/dist/store/tcp_store.h>
#include <ddl/dist/sync/async_ps.h>
#include <ddl/dist/sync/sync.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/dist/work.h>
#include <ddl/dist/zero/zero_optimizer.h>
