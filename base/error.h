// base/, layer 0 (below trace/): ddl::Error and the checking macros every layer uses, and
// nothing else (std only; tensor's own types are in tensor/core/).
// DDL_CHECK reports a user mistake (bad shapes, dtypes, devices, files) with a
// message built from its arguments; DDL_ASSERT guards internal invariants.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ddl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void throw_error(const char* file, int line, const std::string& msg);
[[noreturn]] void throw_assert(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace detail

}  // namespace ddl

#define DDL_CHECK(cond, ...)                                                               \
  do {                                                                                     \
    if (!(cond)) [[unlikely]]                                                              \
      ::ddl::detail::throw_error(__FILE__, __LINE__, ::ddl::detail::str_cat(__VA_ARGS__)); \
  } while (0)

#define DDL_ASSERT(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) [[unlikely]]                                                                      \
      ::ddl::detail::throw_assert(__FILE__, __LINE__, #cond, ::ddl::detail::str_cat(__VA_ARGS__)); \
  } while (0)
