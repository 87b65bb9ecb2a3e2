// trace/: off records nothing, spans nest per thread (in the order viewers need), threads
// get their named tracks, the cap holds with every drop counted, async spans cross threads
// and are mended when the cap cuts them, restarts while threads record are safe, and the
// written file is trace-event JSON that nlohmann_json parses, with the fields Perfetto needs.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/trace/json_writer.h>
#include <ddl/trace/snapshot.h>
#include <ddl/trace/trace.h>

using namespace ddl;
using json = nlohmann::json;

namespace {

// A directory of this process's own, removed when the tests end.
const std::string& temp_dir() {
  static const struct Dir {
    std::string path;
    Dir() {
      std::string tmpl = (std::filesystem::temp_directory_path() / "ddl_test_trace_XXXXXX").string();
      REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
      path = tmpl;
    }
    ~Dir() { std::filesystem::remove_all(path); }
  } dir;
  return dir.path;
}

std::string temp_path(const char* name) { return temp_dir() + "/" + name + ".json"; }

json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f);
  return json::parse(f);
}

void nested_work(int depth) {
  DDL_TRACE_SPAN("level", "test");
  if (depth > 0) {
    nested_work(depth - 1);
    nested_work(depth - 1);
  }
  trace::instant("leaf", "test", {{"depth", depth}});
}

// Per thread, every pair of complete spans is either disjoint or one contains the other.
void check_nesting(const std::vector<trace::Event>& events) {
  std::map<int32_t, std::vector<const trace::Event*>> by_tid;
  for (const auto& e : events)
    if (e.phase == 'X') by_tid[e.tid].push_back(&e);
  for (auto& [tid, spans] : by_tid) {
    std::vector<const trace::Event*> open;  // a stack of enclosing spans
    for (const trace::Event* e : spans) {   // snapshot order: by start time
      while (!open.empty() && open.back()->ts_ns + open.back()->dur_ns <= e->ts_ns) open.pop_back();
      if (!open.empty()) {
        INFO("tid " << tid << ": span at " << e->ts_ns << " overlaps its enclosing span's end");
        CHECK(e->ts_ns + e->dur_ns <= open.back()->ts_ns + open.back()->dur_ns);
      }
      open.push_back(e);
    }
  }
}

}  // namespace

TEST_CASE("trace: nothing is recorded while off", "[trace]") {
  trace::start();
  trace::stop();
  REQUIRE_FALSE(trace::enabled());
  nested_work(3);
  trace::counter("bytes", {{"sent", 1}});
  trace::async_begin("bucket", "ddp", 1);
  CHECK(trace::snapshot().events.empty());
}

TEST_CASE("trace: spans nest per thread and threads keep their names", "[trace]") {
  trace::start();
  trace::set_thread_name("compute");
  std::thread worker([] {
    trace::set_thread_name("data loader 0");
    nested_work(4);
  });
  nested_work(4);
  worker.join();
  trace::stop();
  trace::Snapshot s = trace::snapshot();
  // Per thread: 31 spans and 31 instants for depth 4.
  REQUIRE(s.events.size() == 2 * 62);
  std::map<int32_t, int> per_tid;
  for (const auto& e : s.events) ++per_tid[e.tid];
  REQUIRE(per_tid.size() == 2);
  std::map<std::string, int32_t> tid_of;
  for (const auto& t : s.threads) tid_of[t.name] = t.tid;
  REQUIRE(tid_of.count("compute") == 1);
  REQUIRE(tid_of.count("data loader 0") == 1);
  CHECK(per_tid[tid_of["compute"]] == 62);
  CHECK(per_tid[tid_of["data loader 0"]] == 62);
  check_nesting(s.events);
  for (size_t i = 1; i < s.events.size(); ++i) CHECK(s.events[i - 1].ts_ns <= s.events[i].ts_ns);
  CHECK(s.dropped == 0);
}

TEST_CASE("trace: the cap holds and every dropped event is counted", "[trace]") {
  trace::Options o;
  o.max_events = 1500;  // not a multiple of the buffers' chunk: the last chunk is partial
  trace::start(o);
  auto emit = [] {
    for (int i = 0; i < 2000; ++i) trace::instant("tick", "test", {{"i", i}});
  };
  std::thread a(emit), b(emit);
  emit();
  a.join();
  b.join();
  trace::stop();
  trace::Snapshot s = trace::snapshot();
  CHECK(static_cast<int64_t>(s.events.size()) == 1500);  // each thread fills what it reserved
  CHECK(static_cast<int64_t>(s.events.size()) + s.dropped == 6000);
  CHECK(s.max_events == 1500);

  const std::string path = temp_path("cap");
  trace::write_file(path);
  json doc = read_json(path);
  const json& info = doc["otherData"]["ddl_trace"]["processes"][0];
  CHECK(info["dropped_events"].get<int64_t>() == s.dropped);
  CHECK(info["max_events"].get<int64_t>() == 1500);
  std::remove(path.c_str());
}

TEST_CASE("trace: a small cap is shared by the threads that record, not held by the first", "[trace]") {
  trace::Options o;
  o.max_events = 800;  // below one chunk: charged in small steps, all 3 x 200 events fit
  trace::start(o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) trace::instant("tick", "test");
    });
  for (auto& t : threads) t.join();
  trace::stop();
  const trace::Snapshot s = trace::snapshot();
  CHECK(s.events.size() == 600);
  CHECK(s.dropped == 0);
}

TEST_CASE("trace: a bad cap is an error naming the setting", "[trace]") {
  trace::Options o;
  o.max_events = -5;
  CHECK_THROWS_WITH(trace::start(o), Catch::Contains("max_events") && Catch::Contains("-5"));
  CHECK_FALSE(trace::enabled());
}

TEST_CASE("trace: the file is trace-event JSON with metadata, spans, instants, counters, async pairs", "[trace]") {
  trace::start(trace::Options{0, "trainer"});
  trace::set_thread_name("compute");
  {
    trace::Span span("step", "phase");
    span.arg("bytes", 4096);
    trace::async_begin("bucket 0", "ddp", 7, {{"bytes", 4096}, {"bucket", 0}});
    trace::counter("traffic bytes", {{"sent", 10}, {"received", 20}});
  }
  std::thread comm([] {
    trace::set_thread_name("comm \"quoted\"");
    trace::async_end("bucket 0", "ddp", 7);
  });
  comm.join();
  const std::string path = temp_path("format");
  trace::write_file(path);
  CHECK_FALSE(trace::enabled());  // write_file stops recording
  json doc = read_json(path);
  CHECK(doc["displayTimeUnit"] == "ms");
  std::map<std::string, json> by_ph;
  std::vector<std::string> thread_names;
  std::string process_name;
  for (const json& e : doc["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("tid"));
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.push_back(e["args"]["name"]);
    if (e["ph"] == "M" && e["name"] == "process_name") process_name = e["args"]["name"];
    if (e["ph"] != "M") by_ph[e["ph"].get<std::string>()] = e;
  }
  CHECK(process_name == "trainer");
  CHECK(std::find(thread_names.begin(), thread_names.end(), "compute") != thread_names.end());
  CHECK(std::find(thread_names.begin(), thread_names.end(), "comm \"quoted\"") != thread_names.end());
  REQUIRE(by_ph.count("X"));
  CHECK(by_ph["X"]["name"] == "step");
  CHECK(by_ph["X"]["args"]["bytes"] == 4096);
  CHECK(by_ph["X"]["dur"].get<double>() >= 0);
  CHECK(by_ph["X"]["ts"].get<double>() >= 0);  // time zero is start()
  REQUIRE(by_ph.count("C"));
  CHECK(by_ph["C"]["args"]["received"] == 20);
  REQUIRE(by_ph.count("b"));
  REQUIRE(by_ph.count("e"));
  CHECK(by_ph["b"]["id2"] == by_ph["e"]["id2"]);
  CHECK(by_ph["b"]["tid"] != by_ph["e"]["tid"]);  // launched on compute, completed on comm
  CHECK(by_ph["b"]["args"]["bucket"] == 0);
  std::remove(path.c_str());
}

TEST_CASE("trace: an unwritable path is an error naming it", "[trace]") {
  trace::start();
  CHECK_THROWS_WITH(trace::write_file("/nonexistent-dir/t.json"), Catch::Contains("/nonexistent-dir/t.json"));
}

TEST_CASE("trace: threads with one name share a track unless they overlap", "[trace]") {
  trace::start();
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::thread w([] {
      trace::set_thread_name("data loader 0");
      DDL_TRACE_SPAN("batch", "data");
    });
    w.join();
  }
  std::thread x([] {
    trace::set_thread_name("data loader 0");
    std::thread y([] {
      trace::set_thread_name("data loader 0");
      DDL_TRACE_SPAN("batch", "data");
    });
    y.join();
    DDL_TRACE_SPAN("batch", "data");
  });
  x.join();
  trace::stop();
  trace::Snapshot s = trace::snapshot();
  int named = 0;
  for (const auto& t : s.threads) named += t.name == "data loader 0";
  CHECK(named == 2);  // the three sequential workers share one track; x and y overlap
  CHECK(s.events.size() == 5);
}

TEST_CASE("trace: spans of equal start are written parent first", "[trace]") {
  trace::start();
  const int64_t t = trace::now_ns();
  // Recorded as an engine records a block and its first module: the child closes first.
  trace::complete("child", "test", t, t + 1000);
  trace::complete("parent", "test", t, t + 5000);
  trace::complete("inner", "test", t + 6000, t + 7000);  // identical spans: the later encloses
  trace::complete("outer", "test", t + 6000, t + 7000);
  trace::stop();
  const trace::Snapshot s = trace::snapshot();
  std::vector<std::string> order;
  for (const auto& e : s.events) order.emplace_back(e.name);
  CHECK(order == std::vector<std::string>{"parent", "child", "outer", "inner"});
}

TEST_CASE("trace: events stamped before the trace started are not recorded", "[trace]") {
  trace::start();
  std::optional<trace::Span> old;
  old.emplace("from the first trace", "test");
  trace::start();
  old.reset();  // closes in the second trace: its start predates it
  { DDL_TRACE_SPAN("kept", "test"); }
  std::optional<trace::Span> open_at_stop;
  open_at_stop.emplace("open at stop", "test");
  trace::stop();
  open_at_stop.reset();  // opened in this trace: still recorded
  const trace::Snapshot s = trace::snapshot();
  REQUIRE(s.events.size() == 2);
  CHECK(std::string(s.events[0].name) == "kept");
  CHECK(std::string(s.events[1].name) == "open at stop");
  for (const auto& e : s.events) CHECK(e.ts_ns >= s.start_ns);
}

TEST_CASE("trace: an async span whose end the cap dropped is closed at the trace's end", "[trace]") {
  trace::Options o;
  o.max_events = 2;
  trace::start(o);
  trace::async_end("orphan end", "ddp", 9);  // no begin in this trace: left out
  trace::async_begin("bucket 0", "ddp", 1, {{"bytes", 64}});
  trace::async_end("bucket 0", "ddp", 1);  // past the cap: dropped
  const std::string path = temp_path("unended");
  trace::write_file(path);
  json doc = read_json(path);
  std::vector<json> async;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "b" || e["ph"] == "e") async.push_back(e);
  REQUIRE(async.size() == 2);
  CHECK(async[0]["ph"] == "b");
  CHECK(async[1]["ph"] == "e");
  CHECK(async[1]["name"] == "bucket 0");
  CHECK(async[1]["id2"] == async[0]["id2"]);
  CHECK(async[1]["args"]["unfinished"] == 1);
  CHECK(async[1]["ts"].get<double>() >= async[0]["ts"].get<double>());
  const json& info = doc["otherData"]["ddl_trace"]["processes"][0];
  CHECK(info["unfinished_async_spans"] == 1);
  CHECK(info["dropped_events"] == 1);
}

TEST_CASE("trace: start, stop and snapshot while threads record", "[trace]") {
  // Writers record numbered instants; another thread restarts the trace (with a small cap,
  // so chunks are taken and refused during restarts), stops it and reads it back. Every
  // snapshot must hold only whole events of its own trace, in each thread's order.
  constexpr int kWriters = 3;
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&] {
      int64_t i = 0;
      while (!done.load()) {
        trace::instant("tick", "stress", {{"i", i++}});
        if (i % 64 == 0) DDL_TRACE_SPAN("tock", "stress");
      }
    });
  int snapshots = 0;
  int64_t seen = 0;
  // At least 300 restarts, and on until the writers (slow to start under a sanitizer or on a
  // loaded machine) have recorded into one of them.
  for (int round = 0; round < 300 || (seen == 0 && round < 200000); ++round) {
    trace::Options o;
    o.max_events = 1 + round % 5 * 1000;
    trace::start(o);
    std::this_thread::yield();
    if (round % 3 == 0) trace::stop();
    const trace::Snapshot s = trace::snapshot();
    ++snapshots;
    seen += static_cast<int64_t>(s.events.size());
    REQUIRE(s.max_events == o.max_events);
    REQUIRE(static_cast<int64_t>(s.events.size()) <= s.max_events);
    std::map<int32_t, int64_t> last;
    for (const auto& e : s.events) {
      REQUIRE(e.ts_ns >= s.start_ns);
      REQUIRE(std::string(e.cat) == "stress");
      if (e.phase != 'i') continue;
      REQUIRE(e.nargs == 1);
      auto [it, fresh] = last.emplace(e.tid, e.args[0].value);
      if (!fresh) {
        REQUIRE(e.args[0].value > it->second);  // a thread's events keep their order
        it->second = e.args[0].value;
      }
    }
  }
  done = true;
  for (auto& t : writers) t.join();
  CHECK(snapshots >= 300);
  CHECK(seen > 0);  // the writers did record into the restarted traces

  // Quiet again: one more trace accounts for every event exactly.
  trace::Options o;
  o.max_events = 2500;
  trace::start(o);
  std::vector<std::thread> again;
  for (int w = 0; w < kWriters; ++w)
    again.emplace_back([] {
      for (int i = 0; i < 1000; ++i) trace::instant("tick", "stress", {{"i", i}});
    });
  for (auto& t : again) t.join();
  trace::stop();
  const trace::Snapshot s = trace::snapshot();
  CHECK(static_cast<int64_t>(s.events.size()) + s.dropped == kWriters * 1000);
  CHECK(static_cast<int64_t>(s.events.size()) <= 2500);
}
