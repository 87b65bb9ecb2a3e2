// ddl::dist in one include: stores, process groups, init_process_group.
#pragma once

#include "dist/ddp/ddp.h"
#include "dist/env.h"
#include "dist/gloo/process_group_gloo.h"
#include "dist/init.h"
#include "dist/process_group.h"
#include "dist/store/file_store.h"
#include "dist/store/store.h"
#include "dist/store/tcp_store.h"
#include "dist/sync/sync.h"
#include "dist/trace_merge.h"
#include "dist/work.h"
