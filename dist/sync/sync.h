// The gradient-synchronisation strategies in one include (docs/sync.md).
#pragma once

#include "dist/sync/plugin.h"
#include "dist/sync/registry.h"
#include "dist/sync/ring.h"
#include "dist/sync/strategy.h"
