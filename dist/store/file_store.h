// FileStore: a store on a shared filesystem (NFS, Lustre) for clusters where ranks
// cannot reach each other before rendezvous. One file per key, written to a temporary
// name and renamed (atomic), `add` under an fcntl lock. Use a fresh directory per job:
// keys left by an earlier job would be read as this job's (see docs/dist.md).
#pragma once

#include <string>

#include <ddl/dist/store/store.h>

namespace ddl::dist {

class FileStore : public Store {
 public:
  using Store::get;
  using Store::wait;
  // Creates `dir` (and parents) when missing.
  explicit FileStore(std::string dir, Millis timeout = kDefaultTimeout);
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, Millis timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  const std::string& dir() const { return dir_; }

 private:
  std::string path(const std::string& key) const;  // keys are hex-encoded into file names
  void write_atomic(const std::string& key, const std::string& value);
  std::string dir_;
};

}  // namespace ddl::dist
