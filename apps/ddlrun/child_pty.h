// Where a worker's stdout goes: a pseudo-terminal, so the worker's stdio line-buffers (it
// sees a terminal) and ddlrun relays each line as it is printed, even from a program that
// never flushes. Output post-processing and echo are off, so "\n" arrives as "\n".
// See Note [Worker output] in output_relay.h. Not a controlling terminal: no job control.
#pragma once

#include <sys/ioctl.h>

#include <string>

namespace ddl::launcher {

struct OutputChannel {
  int read_fd = -1;   // ddlrun's end: close-on-exec and non-blocking
  int write_fd = -1;  // the worker's stdout (dup2 it in the child, then close both)
  bool is_pty = false;
};

// A pty of the given size (nullptr: none set, programs assume 80 columns); a pipe when this
// machine has no pty to give (why then says so). Throws std::runtime_error when neither works.
OutputChannel open_output_channel(const winsize* size, std::string* why);

// A plain pipe with the same flags (for stderr, which C stdio never buffers).
OutputChannel open_pipe_channel();

}  // namespace ddl::launcher
