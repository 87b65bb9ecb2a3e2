// A rank of tests/ft/test_ft_agree.cpp, started by ddlrun: ft::resume over a real process
// group when each rank reads its own "node" folder DIR/node<rank>/snap. CASE is
//   same:     rank 0 saves with ft::save, rank 1 gets a copy: both resume, nothing is sent;
//   missing:  only rank 0 has one: rank 1 receives rank 0's and both hold the same state;
//   disagree: rank 1 holds a snapshot of another seed: every rank fails, naming rank 1 and its file.
// Prints "rank R: ok <what>" and exits 0 when the case went as it should, else exits 1.
#include <cstdio>
#include <filesystem>
#include <string>

#include <ddl/ddl.h>
#include <ddl/dist/agreement.h>
#include <ddl/dist/dist.h>
#include <ddl/ft/ft.h>

using namespace ddl;
namespace fs = std::filesystem;

int main(int argc, char** argv) try {
  DDL_CHECK(argc == 3, "usage: ft_agree_rank same|missing|disagree DIR");
  const std::string which = argv[1], dir = argv[2];
  dist::InitOptions opts;
  opts.timeout = std::chrono::seconds(30);
  auto& pg = *dist::init_process_group("gloo", opts);
  const int rank = pg.rank();
  const std::string node = dir + "/node" + std::to_string(rank), path = node + "/snap";
  fs::create_directories(node);

  manual_seed(3);
  nn::Linear net(5, 4);
  optim::SGD opt(net.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  ft::State state{.model = &net, .optimizer = &opt, .position = {.seed = 3, .world_size = 2, .batch_size = 4}};
  // Rank 0's run so far: two steps (momentum buffers), saved at global step 2.
  if (rank == 0) {
    for (int s = 0; s < 2; ++s) {
      opt.zero_grad();
      sum(net(Variable(ones({2, 5}))) * Variable(full({2, 4}, double(s + 1)))).backward();
      opt.step();
    }
    state.position.global_step = 2;
  }
  ft::save(path, state, &pg);  // a collective; rank 0 writes
  pg.barrier_async()->wait();
  if (which == "same" && rank == 1) fs::copy_file(dir + "/node0/snap", path);
  if (which == "disagree" && rank == 1) {  // another run's snapshot: seed 4
    ft::State other = state;
    other.position.seed = 4;
    ft::save_snapshot(path, net, opt, other.position);
  }
  pg.barrier_async()->wait();

  // A restart: fresh weights on every rank, then the agreement.
  manual_seed(rank + 100);
  nn::Linear fresh(5, 4);
  optim::SGD fresh_opt(fresh.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  ft::State back{.model = &fresh, .optimizer = &fresh_opt, .position = {.seed = 3, .world_size = 2, .batch_size = 4}};
  std::string error;
  ft::ResumeOutcome out;
  try {
    out = ft::resume(path, back, &pg);
  } catch (const Error& e) {
    error = e.what();
  }
  if (which == "disagree") {
    DDL_CHECK(!error.empty(), "rank ", rank, " resumed from a snapshot rank 1 disagrees with");
    DDL_CHECK(error.find("rank 1") != std::string::npos && error.find(dir + "/node1/snap") != std::string::npos &&
                  error.find("seed") != std::string::npos,
              "rank ", rank, "'s error names neither rank 1 nor its file: ", error);
    std::printf("rank %d: ok refused\n", rank);
  } else {
    DDL_CHECK(error.empty() && out.resumed && back.position.global_step == 2, "rank ", rank,
              " did not resume: ", error);
    // Every rank holds rank 0's state, byte for byte: compare digests across ranks.
    const std::string digest = std::to_string(ft::state_digest(fresh, fresh_opt));
    const auto all = dist::all_gather_records(pg, digest);
    DDL_CHECK(all[0] == all[1], "ranks hold different states: ", all[0], " vs ", all[1]);
    DDL_CHECK(digest == std::to_string(ft::state_digest(net, opt)) || rank == 1, "rank 0 lost its state");
    DDL_CHECK((which == "missing") == !out.note.empty() || rank != 0, "rank 0's note: '", out.note, "'");
    std::printf("rank %d: ok resumed %s\n", rank, which.c_str());
  }
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "ft_agree_rank: %s\n", e.what());
  return 1;
}
