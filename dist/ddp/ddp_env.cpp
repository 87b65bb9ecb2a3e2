// DDP's bucket sizes from the environment (dist/ddp/ddp_env.h).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/dist/ddp/ddp_env.h>

namespace ddl::dist {

std::string bucket_mb_problem(const std::string& what, double mb) {
  if (std::isfinite(mb) && mb > 0 && mb <= kMaxBucketMB) return "";
  std::ostringstream os;
  os << what << ": a bucket size is a number of MiB above 0 and at most " << static_cast<long long>(kMaxBucketMB)
     << " (PyTorch's bucket_cap_mb; 25 is its default)";
  return os.str();
}

std::string parse_bucket_mb(const std::string& what, const std::string& text, double& mb) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (text.empty() || end == begin || *end != '\0' || errno == ERANGE) return bucket_mb_problem(what, NAN);
  const std::string problem = bucket_mb_problem(what, v);
  if (problem.empty()) mb = v;
  return problem;
}

DDPOptions ddp_options_from_env(DDPOptions base) {
  for (auto [name, field] : {std::pair{kBucketCapEnv, &base.bucket_cap_mb}, {kFirstBucketEnv, &base.first_bucket_mb}}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    const std::string problem = parse_bucket_mb(std::string(name) + "=" + v, v, *field);
    DDL_CHECK(problem.empty(), problem);
  }
  return base;
}

}  // namespace ddl::dist
