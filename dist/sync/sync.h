// The gradient-synchronisation strategies in one include (docs/sync.md).
#pragma once

#include <ddl/dist/sync/plugin.h>
#include <ddl/dist/sync/registry.h>
#include <ddl/dist/sync/ring.h>
#include <ddl/dist/sync/strategy.h>
