// ddlrun test helper: prints the launch variables, one per line, on stdout.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

int main() {
  for (const char* v : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                        "DDL_RESTART_COUNT", "DDL_STORE_SERVED", "DDL_PROGRESS"}) {
    const char* value = std::getenv(v);
    std::printf("%s=%s\n", v, value ? value : "(unset)");
  }
  const char* token = std::getenv("DDL_JOB_TOKEN");
  std::printf("TOKEN_SET=%d\n", token && *token ? 1 : 0);
  std::fprintf(stderr, "to stderr\n");
  return 0;
}
