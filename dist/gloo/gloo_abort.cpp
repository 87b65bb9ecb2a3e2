// The terminate handler for exceptions thrown in Gloo's network thread, and SIGPIPE (see gloo_abort.h).
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <signal.h>
#include <unistd.h>

#include <exception>
#include <map>
#include <mutex>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/gloo/gloo_abort.h>

namespace ddl::dist::detail {

namespace {

std::mutex g_mu;
// Never destroyed: groups held by other statics unregister during exit, after this
// function's statics would have been destroyed.
std::map<int, std::function<std::string()>>& groups() {
  static auto* g = new std::map<int, std::function<std::string()>>;
  return *g;
}
int g_next_id = 0;
std::terminate_handler g_previous = nullptr;

void write_all(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(STDERR_FILENO, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void on_terminate() {
  std::string what;
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const gloo::EnforceNotMet& ex) {
      what = ex.what();
    } catch (const gloo::Exception& ex) {
      what = ex.what();
    } catch (...) {
    }
  }
  if (what.empty()) {
    if (g_previous) g_previous();
    std::abort();
  }
  std::string msg = "ddl: Gloo's network thread failed: " + what +
                    "\nddl: most likely a message arrived that is larger than the buffer posted for it, which "
                    "means the ranks called different operations or sizes (run with DDL_DEBUG=1 to have every "
                    "collective checked first).";
  // The registry is only read, and only if nobody holds its lock (the failing thread may).
  if (g_mu.try_lock()) {
    for (const auto& [id, describe] : groups())
      if (const std::string d = describe(); !d.empty()) msg += "\nddl: " + d;
    g_mu.unlock();
  }
  msg += "\nddl: this process stops (exit " + std::to_string(kGlooAbortExit) +
         "); the other ranks see their connections to it close.\n";
  write_all(msg);
  ddl::dist::flight::dump_on_crash("Gloo's network thread failed (ranks called different operations or sizes?)");
  _exit(kGlooAbortExit);  // the only way out of a terminate handler short of abort()
}

}  // namespace

void install_gloo_abort_handler() {
  static std::once_flag once;
  std::call_once(once, [] { g_previous = std::set_terminate(on_terminate); });
}

void ignore_sigpipe_if_default() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL && !(current.sa_flags & SA_SIGINFO))
      signal(SIGPIPE, SIG_IGN);  // See Note [SIGPIPE] in gloo_abort.h
  });
}

int register_in_flight(std::function<std::string()> describe) {
  std::lock_guard<std::mutex> lock(g_mu);
  groups()[g_next_id] = std::move(describe);
  return g_next_id++;
}

void unregister_in_flight(int id) {
  std::lock_guard<std::mutex> lock(g_mu);
  groups().erase(id);
}

}  // namespace ddl::dist::detail
