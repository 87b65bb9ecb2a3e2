// The user project's own nn/module.h: same path as ddl's, different contents.
#pragma once

namespace app {

struct Module {
  int layers = 2;
};

}  // namespace app
