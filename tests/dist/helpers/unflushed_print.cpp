// ddlrun test helper: `unflushed_print SECONDS` prints one line with printf, never flushes,
// then sleeps SECONDS before exiting. Through a pipe the line would wait in stdio's buffer
// until exit; through ddlrun's pty it must arrive at once (tests/apps/test_ddlrun_output.sh).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  std::printf("printed before sleeping\n");
  std::printf("and an unfinished line");  // flushed by exit, relayed as a line by ddlrun
  sleep(argc > 1 ? std::atoi(argv[1]) : 3);
  return 0;
}
