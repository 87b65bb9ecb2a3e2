// Note [Flight dumps]: when a rank writes its flight-recorder dump.
//  - A collective or send/recv fails (timeout, peer gone): GroupRecorder::fail, normal code.
//  - SIGUSR2 (ddlrun sends it to every rank when it decides the job hangs, before it stops
//    them) and SIGTERM: the handler only writes the signal's number to a pipe; a thread of the
//    recorder's own reads it and dumps with ordinary code (and, for SIGTERM, this rank's part
//    of --trace), then SIGTERM takes its default action again. A frozen rank cannot answer:
//    that it did not is what ddlrun reports.
//  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: the handler dumps itself, through the
//    allocation-free path (signal-safety(7)), then the signal takes its default action.
// Handlers are installed only where DDL_FLIGHT_DIR is set and only over a default
// disposition: a program's own handler is left alone.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/flight/recorder_internal.h>

namespace ddl::dist::flight {
namespace detail {
namespace {

int g_pipe[2] = {-1, -1};

void on_request(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &c, 1);
  errno = saved;
}

const char* fatal_reason(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "fatal signal SIGSEGV";
    case SIGBUS:
      return "fatal signal SIGBUS";
    case SIGFPE:
      return "fatal signal SIGFPE";
    case SIGILL:
      return "fatal signal SIGILL";
    default:
      return "fatal signal SIGABRT";
  }
}

void on_fatal(int sig) {
  dump_from_signal(fatal_reason(sig));
  signal(sig, SIG_DFL);  // SA_RESETHAND did so already; raise for the default action
  raise(sig);
}

void dump_loop() {
  while (true) {
    char c = 0;
    const ssize_t n = read(g_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (c == SIGUSR2) {
      dump("SIGUSR2: a dump on request (ddlrun sends it when it decides the job hangs)");
      continue;
    }
    dump("SIGTERM: stopped (ddlrun stops the other ranks when one fails)");
    write_partial_trace();
    signal(SIGTERM, SIG_DFL);
    raise(SIGTERM);
  }
}

bool is_default(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
}

}  // namespace

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_request;
    sa.sa_flags = SA_RESTART;
    if (is_default(SIGUSR2)) sigaction(SIGUSR2, &sa, nullptr);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;  // a second SIGTERM ends the process at once
    if (is_default(SIGTERM)) sigaction(SIGTERM, &sa, nullptr);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
      if (is_default(sig)) sigaction(sig, &sa, nullptr);
    std::thread(dump_loop).detach();
  });
}

}  // namespace detail

void dump_on_crash(const char* reason) noexcept { detail::dump_from_signal(reason); }

}  // namespace ddl::dist::flight
