// error_of(f): the message of the ddl::Error that f throws, or "" when it throws none;
// for tests that check what an error says (the op's name, the shapes).
#pragma once

#include <functional>
#include <string>

#include <ddl/base/error.h>

namespace ddl::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace ddl::test
