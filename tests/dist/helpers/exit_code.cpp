// ddlrun test helper: `exit_code RANK CODE [ATTEMPTS]` — the given rank exits with CODE
// (a negative CODE: kills itself with that signal) while the others sleep; with ATTEMPTS,
// only the first ATTEMPTS attempts fail (DDL_RESTART_COUNT < ATTEMPTS), later ones succeed.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int rank = std::atoi(std::getenv("RANK"));
  const int attempt = std::getenv("DDL_RESTART_COUNT") ? std::atoi(std::getenv("DDL_RESTART_COUNT")) : 0;
  const int bad_rank = std::atoi(argv[1]), code = std::atoi(argv[2]);
  const int failing_attempts = argc > 3 ? std::atoi(argv[3]) : 1 << 30;
  std::printf("attempt %d\n", attempt);
  std::fflush(stdout);
  if (attempt >= failing_attempts) return 0;
  if (rank == bad_rank) {
    usleep(100 * 1000);
    if (code < 0) raise(-code);
    return code;
  }
  sleep(60);  // must be stopped by ddlrun
  return 0;
}
