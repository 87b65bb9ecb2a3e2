// Cases and the rank side of a graded run (see grade_case.h).
#include "apps/grade/grade_case.h"

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "apps/grade/ddp_checks.h"
#include "apps/grade/labs.h"
#include "apps/grade/recording_group.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/sync/plugin.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::grade {

std::string Case::describe() const {
  return std::to_string(ranks) + " ranks, " + std::to_string(parameters()) + " floats (in " + std::to_string(in) +
         ", hidden " + std::to_string(hidden) + ", out " + std::to_string(out) + "), batch " + std::to_string(batch) +
         " per rank, " + std::to_string(steps) + " steps";
}

std::string Case::to_args() const {
  return "ranks=" + std::to_string(ranks) + " in=" + std::to_string(in) + " hidden=" + std::to_string(hidden) +
         " out=" + std::to_string(out) + " batch=" + std::to_string(batch) + " steps=" + std::to_string(steps) +
         " seed=" + std::to_string(seed) + " cap=" + std::to_string(cap);
}

Case parse_case(const std::string& line) {
  Case c;
  std::istringstream in(line);
  for (std::string field; in >> field;) {
    const auto eq = field.find('=');
    DDL_CHECK(eq != std::string::npos, "ddl-grade: case field '", field, "' is not name=value (in '", line, "')");
    const std::string name = field.substr(0, eq);
    int64_t v = 0;
    try {
      v = std::stoll(field.substr(eq + 1));
    } catch (const std::exception&) {
      DDL_CHECK(false, "ddl-grade: case field '", field, "' needs an integer value");
    }
    DDL_CHECK(v >= 1, "ddl-grade: case field '", field, "' must be at least 1");
    if (name == "ranks") {
      DDL_CHECK(v >= 2 && v <= 16, "ddl-grade: ranks=", v, " must lie in [2, 16]");
      c.ranks = static_cast<int>(v);
    } else if (name == "in")
      c.in = v;
    else if (name == "hidden")
      c.hidden = v;
    else if (name == "out") {
      DDL_CHECK(v >= 2, "ddl-grade: out=", v, " must be at least 2 (classes)");
      c.out = v;
    } else if (name == "batch")
      c.batch = v;
    else if (name == "steps")
      c.steps = v;
    else if (name == "seed")
      c.seed = static_cast<uint64_t>(v);
    else if (name == "cap") {
      DDL_CHECK(v >= 4, "ddl-grade: cap=", v, " must be at least 4 (bytes)");
      c.cap = v;
    } else
      DDL_CHECK(false, "ddl-grade: unknown case field '", name, "' (ranks, in, hidden, out, batch, steps, seed, cap)");
  }
  return c;
}

std::vector<Case> hidden_cases(const std::string& spec) {
  std::vector<Case> cases;
  if (spec.rfind("seed:", 0) == 0) {
    const std::string seed = spec.substr(5);
    DDL_CHECK(!seed.empty() && seed.size() < 20 && seed.find_first_not_of("0123456789") == std::string::npos,
              "ddl-grade: --hidden ", spec, ": the seed must be a number (seed:12345)");
    std::mt19937_64 gen(std::stoull(seed));
    auto pick = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(gen() % uint64_t(hi - lo + 1)); };
    for (int i = 0; i < 3; ++i) {
      Case c;
      c.ranks = static_cast<int>(pick(2, 4));
      c.in = pick(3, 40), c.hidden = pick(5, 80), c.out = pick(2, 9), c.batch = pick(1, 4), c.steps = pick(2, 3);
      c.seed = gen() % 100000 + 1;
      c.cap = 4 * (c.hidden * c.out + c.out);  // W2 and b2 fill the first bucket: overlap is possible
      cases.push_back(c);
    }
  } else {
    std::ifstream in(spec);
    DDL_CHECK(in, "ddl-grade: cannot read the hidden cases file '", spec, "' (or give seed:N)");
    for (std::string line; std::getline(in, line);) {
      const auto hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      cases.push_back(parse_case(line));
    }
    DDL_CHECK(!cases.empty(), "ddl-grade: the hidden cases file '", spec, "' holds no case");
  }
  for (auto& c : cases) c.hidden_case = true;
  return cases;
}

namespace {

std::shared_ptr<nn::Sequential> make_mlp(const Case& c) {
  manual_seed(c.seed);  // every rank and the reference start from the same weights
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(c.in, c.hidden), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(c.hidden, c.out)});
}

}  // namespace

void write_weights(const nn::Module& m, const std::string& path) {
  files::AtomicFile out(path, "ddl-grade");
  for (auto& p : m.parameters()) {
    const auto v = to_vector<float>(p.data().contiguous());
    out.write(v.data(), v.size() * sizeof(float));
  }
  out.commit();
}

// Written last, whole (files::write_atomically: a fresh temporary file, then rename): its
// presence says the rank finished.
void write_json(const nlohmann::json& j, const std::string& path) {
  files::write_atomically(path, j.dump() + "\n", "ddl-grade");
}

int run_rank(const Case& c, const std::string& strategy, const std::vector<std::string>& plugins,
             const std::string& dir, const std::string& lab) {
  int rank = -1;
  try {
    auto group = std::make_shared<RecordingGroup>(dist::init_process_group("gloo"));
    rank = group->rank();
    DDL_CHECK(group->size() == c.ranks, "ddl-grade: launched ", group->size(), " ranks for a case of ", c.ranks);
    for (const auto& p : plugins) dist::load_sync_plugin(p);
    const int64_t global = c.batch * c.ranks;
    Generator g(c.seed + 1);
    const Tensor x = randn({c.steps * global, c.in}, g), y = randint(0, c.out, {c.steps * global}, g);
    auto model = make_mlp(c);
    // Before the strategy's hooks, so that each of these runs first: a bucket launched from
    // the hook of the last gradient did not overlap anything.
    auto params = model->parameters();
    for (size_t i = 0; i < params.size(); ++i)
      params[i].register_post_accumulate_grad_hook(
          [group, i](Variable&) { group->gradient_arrived(static_cast<int64_t>(i)); });
    auto sync =
        dist::make_sync_strategy(lab.empty() ? strategy : strategy_spec(find_lab(lab), strategy, c), model, group);
    group->reset_stats();  // the initial broadcast is the framework's, not graded
    optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
    const auto loop_start = std::chrono::steady_clock::now();
    for (int64_t s = 0; s < c.steps; ++s) {
      group->begin_step();
      const int64_t begin = s * global + rank * c.batch;
      Variable loss =
          cross_entropy(sync->model().forward(Variable(x.narrow(0, begin, c.batch))), y.narrow(0, begin, c.batch));
      opt.zero_grad();
      loss.backward();
      sync->after_backward();
      sync->step(opt);
      sync->after_step();
    }
    const double loop_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
    const dist::CommStats stats = group->stats();
    write_weights(*model, dir + "/rank" + std::to_string(rank) + ".bin");
    if (rank == 0) {  // one process on the whole batch, the lab's oracle
      auto ref = make_mlp(c);
      optim::SGD ref_opt(ref->parameters(), {.lr = 0.1, .momentum = 0.9});
      for (int64_t s = 0; s < c.steps; ++s) {
        Variable loss =
            cross_entropy((*ref)(Variable(x.narrow(0, s * global, global))), y.narrow(0, s * global, global));
        ref_opt.zero_grad();
        loss.backward();
        ref_opt.step();
      }
      write_weights(*ref, dir + "/reference.bin");
    }
    std::string other;
    for (int k = 0; k < dist::kNumOpKinds; ++k) {
      const auto kind = static_cast<dist::OpKind>(k);
      if (kind == dist::OpKind::Send || kind == dist::OpKind::Recv || stats[kind].calls == 0) continue;
      other += (other.empty() ? "" : ", ") + std::string(dist::op_kind_name(kind)) + ": " +
               std::to_string(stats[kind].calls) + " calls";
    }
    nlohmann::json result = {{"sent", stats.bytes_sent()},
                             {"received", stats.bytes_received()},
                             {"other_ops", other},
                             {"loop_seconds", loop_seconds}};
    if (lab == "ddp-buckets") {
      nlohmann::json steps = nlohmann::json::array();
      for (const auto& s : group->steps()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const auto& call : s.all_reduces) calls.push_back({call.numel, call.gradients_before});
        steps.push_back({{"arrivals", s.arrivals}, {"all_reduce", calls}});
      }
      result["steps"] = steps;
      // What the lab's formula counts: one all_reduce of each handout bucket on this group.
      group->reset_stats();
      for (const int64_t n : bucket_numels(c)) group->inner().all_reduce(zeros({n}));
      result["bucket_sent"] = group->stats().bytes_sent();
      result["bucket_received"] = group->stats().bytes_received();
    }
    write_json(result, dir + "/rank" + std::to_string(rank) + ".json");
    dist::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    const std::string who =
        rank >= 0 ? std::to_string(rank) : std::string(std::getenv("RANK") ? std::getenv("RANK") : "0");
    std::ofstream(dir + "/rank" + who + ".error") << e.what() << "\n";
    return 1;
  }
}

}  // namespace ddl::grade
