// Lab fault's cases, rank side and checks (see fault_case.h).
#include "apps/grade/fault_case.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/sync/plugin.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::grade {

namespace fs = std::filesystem;

std::string FaultPlan::describe() const {
  const std::string how = torn ? "dies while writing its checkpoint of step " : "is killed after step ";
  return "rank " + std::to_string(kill_rank) + " " + how + std::to_string(kill_step) + " (checkpoints every " +
         std::to_string(every) + " steps)";
}

std::string FaultPlan::to_args() const {
  return "every=" + std::to_string(every) + " rank=" + std::to_string(kill_rank) +
         " step=" + std::to_string(kill_step) + " torn=" + std::to_string(torn ? 1 : 0);
}

FaultPlan parse_fault_plan(const std::string& args) {
  FaultPlan p;
  std::istringstream in(args);
  for (std::string field; in >> field;) {
    const auto eq = field.find('=');
    DDL_CHECK(eq != std::string::npos, "ddl-grade: fault field '", field, "' is not name=value");
    const std::string name = field.substr(0, eq);
    const std::string value = field.substr(eq + 1);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    DDL_CHECK(ec == std::errc() && end == value.data() + value.size() && !value.empty(), "ddl-grade: --fault: field '",
              name, "' wants an integer, not '", value, "'");
    if (name == "every")
      p.every = v;
    else if (name == "rank")
      p.kill_rank = static_cast<int>(v);
    else if (name == "step")
      p.kill_step = v;
    else if (name == "torn")
      p.torn = v != 0;
    else
      DDL_CHECK(false, "ddl-grade: unknown fault field '", name, "' (every, rank, step, torn)");
  }
  return p;
}

std::vector<Case> fault_cases(const std::vector<Case>& cases) {
  std::vector<Case> out;
  for (const Case& base : cases) {
    FaultPlan p;
    p.every = base.hidden_case ? 2 + static_cast<int64_t>(base.seed % 2) : 2;
    Case c = base;
    c.steps = std::max(base.steps, 3 * p.every);
    // Between checkpoints, one step after the second checkpoint: the last rank in public
    // cases, one the seed picks in hidden ones.
    p.kill_rank = static_cast<int>((c.ranks - 1 + (base.hidden_case ? base.seed : 0)) % c.ranks);
    p.kill_step = 2 * p.every + 1, p.torn = false;
    c.fault = p.to_args();
    out.push_back(c);
    // Cut mid-write: the second checkpoint, on a rank the seed picks (rank 1 in public cases).
    p.kill_rank = static_cast<int>(base.seed % static_cast<uint64_t>(c.ranks)), p.kill_step = 2 * p.every,
    p.torn = true;
    c.fault = p.to_args();
    out.push_back(c);
  }
  return out;
}

namespace {

// The graded model: the MLP of the other labs plus a buffer "step", the optimizer steps
// done, which a checkpoint of the model's state carries and a resume restores.
class CountedMlp final : public nn::Module {
 public:
  explicit CountedMlp(const Case& c) : nn::Module("CountedMlp") {
    manual_seed(c.seed);  // every rank and the reference start from the same weights
    body_ = register_module("body", std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
                                        std::make_shared<nn::Linear>(c.in, c.hidden), std::make_shared<nn::ReLU>(),
                                        std::make_shared<nn::Linear>(c.hidden, c.out)}));
    register_buffer("step", zeros({1}, DType::Int64));
  }
  Variable forward(const Variable& x) override { return body_->forward(x); }
  // Looked up by name each time: a strategy may load state by replacing a buffer's data.
  Tensor step_tensor() const {
    for (const auto& [name, v] : named_buffers())
      if (name == "step") return v.data();
    DDL_CHECK(false, "ddl-grade: the model lost its 'step' buffer");
    return {};
  }
  int64_t step() const { return step_tensor().contiguous().data<int64_t>()[0]; }
  void set_step(int64_t s) const { step_tensor().fill_(static_cast<double>(s)); }

 private:
  std::shared_ptr<nn::Sequential> body_;
};

std::string final_name(int rank, int64_t step) {
  return "rank" + std::to_string(rank) + "-step" + std::to_string(step) + ".ckpt";
}

// This rank's files under final checkpoint names: [step, bytes] pairs.
nlohmann::json held_files(const fs::path& ckpt, int rank, int64_t steps) {
  nlohmann::json held = nlohmann::json::array();
  for (int64_t s = 1; s <= steps; ++s)
    if (fs::exists(ckpt / final_name(rank, s)))
      held.push_back({s, static_cast<int64_t>(fs::file_size(ckpt / final_name(rank, s)))});
  return held;
}

// Note [Cutting a write]
// The dying rank of a torn case waits (at most 5 s) until every other rank has written
// its checkpoint of the step, so that they all hold it and only the dying rank does not;
// then it lowers RLIMIT_FSIZE below any file that holds the weights. The kernel ends the
// write that crosses the limit early and kills the process with SIGXFSZ at the next
// (setrlimit(2), write(2)), as a power cut or an OOM kill in the middle of a write would.
void cut_writes_after_the_others(const fs::path& dir, int rank, int world, int64_t limit) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int r = 0; r < world; ++r)
    while (r != rank && !fs::exists(dir / ("wrote.rank" + std::to_string(r))) &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const rlimit no_core{0, 0}, size{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  setrlimit(RLIMIT_CORE, &no_core);
  setrlimit(RLIMIT_FSIZE, &size);
}

}  // namespace

int run_fault_rank(const Case& c, const FaultPlan& plan, const std::string& strategy,
                   const std::vector<std::string>& plugins, const std::string& dir) {
  const char* restart = std::getenv("DDL_RESTART_COUNT");
  const int attempt = restart ? std::atoi(restart) : 0;
  int rank = -1;
  try {
    auto group = dist::init_process_group("gloo");
    rank = group->rank();
    DDL_CHECK(group->size() == c.ranks, "ddl-grade: launched ", group->size(), " ranks for a case of ", c.ranks);
    for (const auto& p : plugins) dist::load_sync_plugin(p);
    const fs::path ckpt = fs::path(dir) / "checkpoints";
    fs::create_directories(ckpt);
    setenv("DDL_LAB_CHECKPOINT_DIR", ckpt.c_str(), 1);
    setenv("DDL_LAB_CHECKPOINT_EVERY", std::to_string(plan.every).c_str(), 1);
    const int64_t global = c.batch * c.ranks;
    Generator g(c.seed + 1);
    const Tensor x = randn({c.steps * global, c.in}, g), y = randint(0, c.out, {c.steps * global}, g);
    auto model = std::make_shared<CountedMlp>(c);
    const nlohmann::json held = held_files(ckpt, rank, c.steps);  // before the strategy may tidy up
    auto sync = dist::make_sync_strategy(strategy, model, group);
    const int64_t resumed = model->step();
    if (attempt > 0)
      write_json({{"resumed", resumed}, {"held", held}},
                 (fs::path(dir) / ("rank" + std::to_string(rank) + ".resume.json")).string());
    // Ranks at different steps cannot train together (their all-reduces no longer pair up).
    const Tensor all = zeros({c.ranks}, DType::Int64), mine = full({1}, static_cast<double>(resumed), DType::Int64);
    group->all_gather(all, mine);
    std::string steps;
    bool same = true;
    for (int r = 0; r < c.ranks; ++r) {
      same = same && all.data<int64_t>()[r] == resumed;
      steps += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + " from step " +
               std::to_string(all.data<int64_t>()[r]);
    }
    DDL_CHECK(same, "the ranks resumed from different steps (", steps,
              "), so they cannot train together; the grader stopped them (see the agreement check)");
    DDL_CHECK(resumed >= 0 && resumed <= c.steps, "the model's step buffer says ", resumed,
              " after the restart, outside [0, ", c.steps, "]");
    group->reset_stats();
    optim::SGD opt(model->parameters(), {.lr = 0.1});
    for (int64_t s = resumed; s < c.steps; ++s) {
      const int64_t begin = s * global + rank * c.batch;
      Variable loss =
          cross_entropy(sync->model().forward(Variable(x.narrow(0, begin, c.batch))), y.narrow(0, begin, c.batch));
      opt.zero_grad();
      loss.backward();
      sync->after_backward();
      sync->step(opt);
      model->set_step(s + 1);
      const bool at_kill = attempt == 0 && s + 1 == plan.kill_step, dying = at_kill && rank == plan.kill_rank;
      if (dying && plan.torn)  // See Note [Cutting a write]
        cut_writes_after_the_others(dir, rank, c.ranks, FaultPlan::torn_limit(c));
      sync->after_step();
      if (dying) raise(SIGKILL);   // also when the cut write did not kill it
      if (at_kill && plan.torn) {  // hold the checkpoint just written until ddlrun stops the group
        std::ofstream(fs::path(dir) / ("wrote.rank" + std::to_string(rank))) << "\n";
        for (;;) pause();
      }
    }
    const dist::CommStats stats = group->stats();
    write_weights(*model, dir + "/rank" + std::to_string(rank) + ".bin");
    if (rank == 0) {  // one process on the whole batch, never interrupted: the lab's oracle
      CountedMlp ref(c);
      optim::SGD ref_opt(ref.parameters(), {.lr = 0.1});
      for (int64_t s = 0; s < c.steps; ++s) {
        Variable loss = cross_entropy(ref(Variable(x.narrow(0, s * global, global))), y.narrow(0, s * global, global));
        ref_opt.zero_grad();
        loss.backward();
        ref_opt.step();
      }
      write_weights(ref, dir + "/reference.bin");
    }
    write_json({{"sent", stats.bytes_sent()}, {"received", stats.bytes_received()}, {"other_ops", ""}},
               (fs::path(dir) / ("rank" + std::to_string(rank) + ".json")).string());
    dist::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    // The first attempt's survivors fail when the killed rank's connections close: kept
    // apart, so only the restarted run's errors count.
    const std::string who =
        rank >= 0 ? std::to_string(rank) : std::string(std::getenv("RANK") ? std::getenv("RANK") : "0");
    std::ofstream(dir + "/rank" + who + (attempt == 0 ? ".attempt0.error" : ".error")) << e.what() << "\n";
    return 1;
  }
}

std::vector<Check> fault_checks(const Case& c, const fs::path& dir,
                                const std::function<Check(const std::string&)>& mk) {
  const FaultPlan plan = parse_fault_plan(c.fault);
  const int64_t want = plan.expected_resume();
  Check agree = mk("after the restart every rank resumes from step " + std::to_string(want) +
                   ", the newest step all ranks held (" + plan.describe() + ")");
  Check atomic =
      mk("checkpoints are written atomically: rank " + std::to_string(plan.kill_rank) + ", cut while writing step " +
         std::to_string(plan.kill_step) + "'s, left no partial file under its final name");
  std::vector<nlohmann::json> resume;
  std::vector<int> absent;
  for (int r = 0; r < c.ranks; ++r) {
    std::ifstream in(dir / ("rank" + std::to_string(r) + ".resume.json"));
    if (!in) {
      absent.push_back(r);
      continue;
    }
    resume.push_back(nlohmann::json::parse(in));
  }
  if (!absent.empty()) {
    agree.output = atomic.output = "not checked: rank " + std::to_string(absent.front()) +
                                   " did not come back from the restart (see the first check)";
  } else {
    std::string from;
    bool same = true;
    for (int r = 0; r < c.ranks; ++r) {
      same = same && resume[r]["resumed"] == resume[0]["resumed"];
      from += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + " from step " +
              std::to_string(resume[r]["resumed"].get<int64_t>());
    }
    const int64_t got = resume[0]["resumed"].get<int64_t>();
    const std::string held_why = plan.torn ? "rank " + std::to_string(plan.kill_rank) + " died while writing step " +
                                                 std::to_string(plan.kill_step) + "'s checkpoint, so it holds step " +
                                                 std::to_string(want) + " and every other rank holds step " +
                                                 std::to_string(plan.kill_step) + " as well"
                                           : "";
    if (!same) {
      agree.output = "the ranks resumed from different steps (" + from +
                     "): they must agree on one step, the "
                     "newest that every rank holds, e.g. an all_reduce with ReduceOp::Min of each rank's newest" +
                     (held_why.empty() ? "" : " (" + held_why + ")");
    } else if (got > want) {
      agree.output = "every rank resumed from step " + std::to_string(got) + ", but rank " +
                     std::to_string(plan.kill_rank) + " held no complete checkpoint of it (" + held_why +
                     "): each rank must load its own file, of the newest step that every rank holds";
    } else if (got < want) {
      agree.output = "every rank resumed from step " + std::to_string(got) + " where every rank held step " +
                     std::to_string(want) +
                     ": the steps since were trained twice (is a checkpoint written every K steps, in after_step, "
                     "and does the model's whole state, its 'step' buffer included, come back?)";
    } else {
      agree.score = 1;
      agree.output = "every rank resumed from step " + std::to_string(got);
    }
    atomic.score = 1;
    atomic.output = "no file under a final name was cut short";
    for (const auto& f : resume[plan.kill_rank]["held"])
      if (f[0].get<int64_t>() == plan.kill_step) {
        atomic.score = 0;
        atomic.output = "after the restart rank " + std::to_string(plan.kill_rank) + " held " +
                        final_name(plan.kill_rank, plan.kill_step) + " (" + std::to_string(f[1].get<int64_t>()) +
                        " bytes) although it died while writing it (the grader cut its writes at " +
                        std::to_string(FaultPlan::torn_limit(c)) +
                        " bytes): a torn file under the final name; write a temporary file, fsync it, "
                        "then rename it";
      }
  }
  std::vector<Check> out{agree};
  if (plan.torn) out.push_back(atomic);
  return out;
}

}  // namespace ddl::grade
