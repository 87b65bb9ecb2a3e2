// Runs the operating system's own tools (ip, tc from iproute2) and reports their failures
// with the command line and what it printed. No shell: arguments are passed as they are.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace ddl::cluster {

// A step of building or removing the emulated hosts failed (ddlrun exits 1 on it).
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CommandResult {
  int status = -1;     // exit status; -1 when it could not run or was killed
  std::string output;  // stdout and stderr together
};

CommandResult run_command(const std::vector<std::string>& argv);
// Runs argv; on failure throws SetupError("<what>: `<command>` failed: <output>").
void run_checked(const std::string& what, const std::vector<std::string>& argv);
std::string command_line(const std::vector<std::string>& argv);

}  // namespace ddl::cluster
