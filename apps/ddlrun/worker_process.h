// One worker process of ddlrun's supervisor (launcher.cpp): how it is started (fork and
// exec with its output on a pty and a pipe, child_pty.h), how its output is read, and how
// its wait status is put into words and into ddlrun's exit code.
#pragma once

#include <sys/ioctl.h>
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "apps/ddlrun/launcher.h"
#include "apps/ddlrun/output_relay.h"

namespace ddl::launcher {

struct Worker {
  int rank = 0, local_rank = 0;
  pid_t pid = -1;
  bool running = false;
  bool signalled = false;  // ddlrun told it to stop: its failure is not its own
  int sent = 0;            // the last signal ddlrun sent it
  bool stopped = false;    // seen stopped (SIGSTOP, a debugger): it needs SIGCONT to act on a signal
  int status = 0;
  int fds[2] = {-1, -1};  // stdout (a pty), stderr (a pipe): see child_pty.h
};

// "SIGTERM", or "signal N" for a number without a name.
std::string signal_name(int sig);
// A wait(2) status in words: "exited with status 3", "was killed by signal 9 (SIGKILL)".
std::string describe_status(int status);
// The exit code ddlrun reports for a failed worker's status: its own, or 128 + the signal.
int exit_code(int status);

// Relays what worker i's stream holds now (one read, or every byte when `until_empty`);
// at its end (0 from a pipe, EIO from a pty nobody writes to) closes it.
void pump(Worker& w, int i, StreamKind kind, OutputRelay& relay, bool until_empty);

// Starts worker i (w.rank) with `env` added to ddlrun's environment; its stdout is a pty
// of the console's `size` (null: a pipe), its stderr a pipe. Fills w's pid and fds.
pid_t spawn(const Config& cfg, Worker& w, const std::vector<std::pair<std::string, std::string>>& env,
            const winsize* size, OutputRelay& relay, int i);

}  // namespace ddl::launcher
