// pthread_setname_np / pthread_getname_np (glibc, Linux): see trace/thread_name.h.
#include <pthread.h>

#include <ddl/trace/thread_name.h>

namespace ddl::trace {

namespace {
constexpr size_t kMaxName = 15;  // TASK_COMM_LEN (16) less the NUL: pthread_setname_np(3)
}

void set_os_thread_name(std::string_view name) {
  const std::string cut(name.substr(0, kMaxName));
  pthread_setname_np(pthread_self(), cut.c_str());  // ERANGE cannot happen after the cut
}

std::string os_thread_name() {
  char buf[kMaxName + 1] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return "";
  return buf;
}

}  // namespace ddl::trace
