// Names threads for the operating system, so `ps -L`, `top -H` and
// /proc/<pid>/task/<tid>/comm show each thread ddl starts by its role (compute, gloo,
// loader N, store, ...); docs/report.md lists them. Separate from trace::set_thread_name,
// whose track names (docs/trace.md) may be longer than the kernel's 15 bytes.
#pragma once

#include <string>
#include <string_view>

namespace ddl::trace {

// Names the calling thread as pthread_setname_np(3) does; a name over 15 bytes is cut
// (the kernel's TASK_COMM_LEN is 16 with the NUL). Never throws; a failure is ignored.
void set_os_thread_name(std::string_view name);
// The calling thread's name as the kernel reports it.
std::string os_thread_name();

}  // namespace ddl::trace
