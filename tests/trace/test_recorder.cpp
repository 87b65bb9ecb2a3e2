// trace/: off records nothing, spans nest per thread, threads get their named tracks, the
// cap holds with every drop counted, async spans cross threads, and the written file is
// trace-event JSON that nlohmann_json parses, with the fields Perfetto needs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tensor/error.h"
#include "trace/json_writer.h"
#include "trace/snapshot.h"
#include "trace/trace.h"

using namespace ddl;
using json = nlohmann::json;

namespace {

std::string temp_path(const char* name) { return std::string("/tmp/ddl_test_trace_") + name + ".json"; }

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
  CHECK(static_cast<int64_t>(s.events.size()) <= 1500);
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
