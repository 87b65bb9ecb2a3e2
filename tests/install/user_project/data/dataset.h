// The user project's own data/dataset.h: same path as ddl's, different contents. A ddl
// header that includes "data/dataset.h" must never reach this file.
#pragma once

#include <string>
#include <vector>

namespace app {

struct Dataset {
  std::vector<std::string> names{"a", "b", "c"};
  int size() const { return static_cast<int>(names.size()); }
};

}  // namespace app
