// ddlrun --syscalls: each worker runs under `strace -f -c -o FILE` (strace(1): -c counts
// every system call of the process, -f of all its threads and children too), and at the
// end ddlrun merges the per-rank summaries into one table: calls per system call per rank,
// the top N by calls over all ranks, then the rest and the total. It counts calls, not
// their time: strace stops the tracee at every call, so its times are strace's own.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddl::launcher {

// The path of program `name` on PATH ("" when it is not there).
std::string find_in_path(const std::string& name);
// strace's path ("" when it is not on PATH).
std::string find_strace();
// What goes before the program to count its calls into `file`; with `setpriv` (util-linux),
// the program dies with strace, as the worker dies with ddlrun.
std::vector<std::string> strace_prefix(const std::string& strace, const std::string& setpriv, const std::string& file);

// One summary file of `strace -c`: calls per system call ("total" excluded). Empty when
// the file is missing or holds no table (the rank never ran).
std::map<std::string, long long> read_strace_summary(const std::string& file);

// The table: `per_rank` holds (rank, counts) in rank order; `top` rows, then "(other N)"
// and "total".
std::string syscall_table(const std::vector<std::pair<int, std::map<std::string, long long>>>& per_rank, int top);

}  // namespace ddl::launcher
