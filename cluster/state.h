// The record of what one emulated job created, in /run/ddlrun/<job>/state, written whole
// (fsynced and renamed) before each thing is made, so that `ddlrun --cleanup` can remove what
// a SIGKILLed launcher left behind; a record that cannot be written stops the build before
// the thing is made. A job whose launcher still runs (same pid and start time) is never
// touched.
#pragma once

#include <string>
#include <vector>

namespace ddl::cluster {

inline constexpr const char* kStateRoot = "/run/ddlrun";
// $DDLRUN_STATE_DIR when set (tests point it at a private folder, or a small full tmpfs),
// else kStateRoot.
std::string state_root();

struct Resource {
  std::string kind;  // "netns" (a named network namespace) or "cgroup" (a directory)
  std::string name;
};

class StateFile {
 public:
  // Creates <state_root()>/<job>/state naming this process as the launcher. Throws
  // SetupError when it cannot (a full /run).
  explicit StateFile(const std::string& job);
  // Adds r to the record on disk, before r is made; throws SetupError (r not added) when
  // the record cannot be written.
  void record(const Resource& r);
  const std::vector<Resource>& resources() const { return resources_; }
  void remove();  // the file and its folder, once everything is gone

 private:
  std::string dir_;
  std::vector<Resource> resources_;
};

// Kills every process inside them, then deletes them, last made first. Returns the
// problems met (empty when everything went).
std::vector<std::string> remove_resources(const std::vector<Resource>& resources);

// `ddlrun --cleanup`: removes the resources of every job whose launcher is gone, saying
// what it removed on stdout: those its record names and any namespace named after the job
// (<job>-*). A job folder whose state file is empty or missing recorded nothing (a record is
// never written partly) and, once a minute old, is removed with such namespaces. Returns 0,
// or 1 when something could not be removed.
int cleanup_stale();

// Field 22 of /proc/<pid>/stat (0 when the process does not exist).
unsigned long long process_start_time(int pid);

}  // namespace ddl::cluster
