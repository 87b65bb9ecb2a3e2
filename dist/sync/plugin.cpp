// load_sync_plugin (see plugin.h). The file is opened once and everything afterwards —
// the ownership and mode checks and dlopen() itself — goes through that descriptor
// (/proc/self/fd/N), so the file checked is the file loaded, even if the path is
// replaced in between (a time-of-check to time-of-use race otherwise; see open(2) and
// dlopen(3)).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include <ddl/base/error.h>
#include <ddl/dist/sync/plugin.h>
#include <ddl/dist/sync/registry.h>

namespace ddl::dist {

namespace {

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void load_sync_plugin(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::pair<dev_t, ino_t>> loaded;
  std::lock_guard<std::mutex> lock(mutex);

  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  DDL_CHECK(f.fd >= 0, "load_sync_plugin: cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  DDL_CHECK(::fstat(f.fd, &st) == 0, "load_sync_plugin: cannot stat '", path, "': ", std::strerror(errno));
  DDL_CHECK(S_ISREG(st.st_mode), "load_sync_plugin: '", path, "' is not a regular file");
  // Loading a library runs its code as this user: whoever may change the file owns this process.
  DDL_CHECK((st.st_mode & (S_IWGRP | S_IWOTH)) == 0, "load_sync_plugin: refusing '", path, "': it is writable by ",
            (st.st_mode & S_IWOTH) ? "every user" : "its group", " (mode ", octal_mode(st.st_mode),
            "), so others could change the code it runs; chmod go-w '", path, "'");
  const uid_t me = ::geteuid();
  DDL_CHECK(st.st_uid == me || st.st_uid == 0, "load_sync_plugin: refusing '", path, "': it belongs to user ",
            st.st_uid, ", not to you (", me,
            ") or root, so its owner could change the code it runs; copy it and "
            "load your copy");
  if (loaded.count({st.st_dev, st.st_ino})) return;

  const std::string fd_path = "/proc/self/fd/" + std::to_string(f.fd);
  void* handle = ::dlopen(fd_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    DDL_CHECK(false, "load_sync_plugin: cannot load '", path, "': ", why ? why : "dlopen failed",
              " (build it with -shared -fPIC against this ddl: docs/sync.md)");
  }
  using Entry = void (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kSyncPluginEntry));
  if (entry == nullptr) {
    ::dlclose(handle);
    DDL_CHECK(false, "load_sync_plugin: '", path, "' does not export ", kSyncPluginEntry,
              "(); define extern \"C\" void ", kSyncPluginEntry,
              "() in it, calling ddl::dist::register_sync_strategy (docs/sync.md)");
  }
  const std::string origin = "plugin " + path;
  const size_t before = sync_strategies().size();
  std::string failure;
  {
    detail::SyncRegistrationOrigin as(origin);
    try {
      entry();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "an exception that is not a std::exception";
    }
  }
  if (failure.empty() && sync_strategies().size() == before)
    failure = std::string(kSyncPluginEntry) + "() registered no strategy";
  if (!failure.empty()) {
    // Its factories point into the library: drop them before the library goes.
    detail::unregister_sync_strategies_from(origin);
    ::dlclose(handle);
    DDL_CHECK(false, "load_sync_plugin: '", path, "': ", failure);
  }
  loaded.insert({st.st_dev, st.st_ino});
  // The descriptor stays open, as the library stays loaded: dlopen(3) finds an already
  // loaded library by its name, so a later plugin given this number back, and with it
  // the same /proc/self/fd/N, would get this library instead of its own.
  f.fd = -1;
}

}  // namespace ddl::dist
