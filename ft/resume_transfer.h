// Rank 0's snapshot sent to the ranks that lack it (see Note [Resume agreement] in
// resume.cpp): in pieces of at most kPieceBytes, so no rank holds more than one piece of it
// in memory, into a temporary file that is removed on every exit this process controls.
// It does not check what the bytes are: load_snapshot does, as for any file.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/ft/resume_wire.h>

namespace ddl::ft::detail {

// A file named ddl-resume-<pid>-XXXXXX in the temporary directory ($TMPDIR, else /tmp),
// removed by the destructor (return or exception) and, while it exists, on SIGTERM, SIGINT
// and SIGHUP, after which the signal's previous action runs (by default the process still
// dies of it; a signal the process ignores stays ignored). Creating one first removes the
// files of dead processes a minute old (a SIGKILL leaves its file). One at a time per
// process. Throws ddl::Error when it cannot be created.
class ResumeTempFile {
 public:
  ResumeTempFile();
  ~ResumeTempFile();
  ResumeTempFile(const ResumeTempFile&) = delete;
  ResumeTempFile& operator=(const ResumeTempFile&) = delete;
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Removes the ddl-resume-<pid>-* files in `dir` whose process is gone and that were last
// written at least `min_age` ago (a process in another PID namespace sharing the folder
// looks gone, but keeps writing or loading its file). Returns how many it removed.
int remove_stale_resume_files(const std::string& dir, std::chrono::seconds min_age);

// A collective: rank 0 sends the file at `path` (other ranks' `path` is ignored); a rank
// given `into` writes the bytes there, the others drop them. Every rank makes the same
// broadcasts whatever fails. Returns "" or what failed on this rank (rank 0: reading;
// receivers: rank 0 had nothing to send, or writing).
std::string transfer_snapshot(dist::ProcessGroup& group, const std::string& path, ResumeTempFile* into,
                              int64_t piece = kPieceBytes);

// Tests only: called with "created", "piece" (after each piece is written) and "loading"
// on receiving ranks, so a test can stop a rank at each phase.
std::function<void(const char* phase)>& resume_test_hook();

}  // namespace ddl::ft::detail
