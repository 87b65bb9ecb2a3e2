// Throwing helpers kept out of line so DDL_CHECK stays cheap at call sites.
#include <ddl/base/error.h>

namespace ddl::detail {

void throw_error(const char* /*file*/, int /*line*/, const std::string& msg) { throw Error(msg); }

void throw_assert(const char* file, int line, const char* cond, const std::string& msg) {
  throw Error(str_cat("internal error at ", file, ":", line, ": ", cond, " failed. ", msg,
                      " (this is a bug in ddl; please report it)"));
}

}  // namespace ddl::detail
