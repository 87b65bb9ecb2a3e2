// HashStore and PrefixStore (see store.h).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <ddl/base/error.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist {

Millis configured_timeout() {
  const char* v = std::getenv("DDL_TIMEOUT");
  if (!v || !*v) return kDefaultTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(v, &end);
  DDL_CHECK(end && *end == '\0' && std::isfinite(seconds) && seconds > 0 && seconds < 1e7, "dist: DDL_TIMEOUT='", v,
            "' is not a positive number of seconds (e.g. DDL_TIMEOUT=60)");
  return Millis(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

Millis Store::bounded(Millis timeout) const {
  const auto d = deadline_.load();
  if (d == 0) return timeout;
  const auto left =
      std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(d)) - std::chrono::steady_clock::now();
  return std::clamp(std::chrono::duration_cast<Millis>(left), Millis(0), timeout);
}

namespace detail {
std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size() && i < 8; ++i) s += (i ? ", " : "") + keys[i];
  if (keys.size() > 8) s += ", ... (" + std::to_string(keys.size()) + " keys)";
  return s;
}

int64_t parse_counter(const std::string& key, const std::string& value) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  DDL_CHECK(ec == std::errc() && p == value.data() + value.size(), "store: add on key '", key,
            "' whose value is not an integer (it was set with set())");
  return v;
}
}  // namespace detail

void HashStore::set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    data_[key] = value;
  }
  cv_.notify_all();
}

std::vector<std::string> HashStore::keys_ending_with(const std::string& suffix) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, value] : data_)
    if (key.size() >= suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(key);
  return out;
}

std::string HashStore::get(const std::string& key, Millis timeout) {
  wait({key}, timeout);
  std::lock_guard<std::mutex> lock(mu_);
  return data_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  int64_t v;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = data_.find(key);
    const int64_t old = it == data_.end() ? 0 : detail::parse_counter(key, it->second);
    DDL_CHECK(!__builtin_add_overflow(old, delta, &v), "store: add(", key, ", ", delta, ") to ", old,
              " overflows a 64-bit counter");
    data_[key] = std::to_string(v);
  }
  cv_.notify_all();
  return v;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& k : keys)
    if (!data_.count(k)) return false;
  return true;
}

void HashStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto all_there = [&] {
    for (const auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  };
  bool ok = cv_.wait_for(lock, timeout, all_there);
  DDL_CHECK(ok, "store: timed out after ", timeout.count(), " ms waiting for key(s) ", detail::join_keys(keys));
}

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base)
    : Store(base->timeout()), prefix_(std::move(prefix)), base_(std::move(base)) {}

std::vector<std::string> PrefixStore::keys(const std::vector<std::string>& ks) const {
  std::vector<std::string> out;
  out.reserve(ks.size());
  for (const auto& k : ks) out.push_back(key(k));
  return out;
}

void PrefixStore::set(const std::string& k, const std::string& v) { base_->set(key(k), v); }
std::string PrefixStore::get(const std::string& k, Millis t) { return base_->get(key(k), t); }
int64_t PrefixStore::add(const std::string& k, int64_t d) { return base_->add(key(k), d); }
bool PrefixStore::check(const std::vector<std::string>& ks) { return base_->check(keys(ks)); }
void PrefixStore::wait(const std::vector<std::string>& ks, Millis t) { base_->wait(keys(ks), t); }

}  // namespace ddl::dist
