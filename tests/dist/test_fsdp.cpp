// FullyShardedDataParallel over real processes and Gloo: W ranks on batch b end with the
// weights of one process on the W*b batch (and bitwise those of DDP at 2 ranks); the
// gradients of the shards are the unwrapped model's; a unit's full parameters hold no
// memory outside its forward; the whole state dict round-trips through safetensors, into
// one plain process and into FSDP at another world size.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

// A Linear that records, from inside its forward (while its unit is gathered), how much
// gathered memory the FSDP wrapper holds.
struct ProbedLinear : nn::Module {
  std::shared_ptr<nn::Linear> fc;
  FullyShardedDataParallel* fsdp = nullptr;
  std::vector<int64_t> seen;
  ProbedLinear(int64_t in, int64_t out) : nn::Module("ProbedLinear") {
    fc = register_module("fc", std::make_shared<nn::Linear>(in, out));
  }
  Variable forward(const Variable& x) override {
    Variable y = fc->forward(x);
    if (fsdp) seen.push_back(fsdp->gathered_resident_bytes());
    return y;
  }
};

// Three Linear units of odd sizes (144, 272, 51 elements: padding at 2 and 3 ranks); the
// first and the last are ProbedLinears when given.
std::shared_ptr<nn::Sequential> make_mlp(std::shared_ptr<ProbedLinear> first = nullptr,
                                         std::shared_ptr<ProbedLinear> last = nullptr) {
  manual_seed(5);
  auto m = std::make_shared<nn::Sequential>();
  m->push_back(first ? std::shared_ptr<nn::Module>(first) : std::make_shared<nn::Linear>(8, 16));
  m->push_back(std::make_shared<nn::Tanh>());
  m->push_back(std::make_shared<nn::Linear>(16, 16));
  m->push_back(std::make_shared<nn::ReLU>());
  m->push_back(last ? std::shared_ptr<nn::Module>(last) : std::make_shared<nn::Linear>(16, 3));
  return m;
}

// Linear 8 -> 16, two pre-norm encoder layers (2 heads, no dropout), Linear 16 -> 3 on the
// mean over positions: x [B, T, 8] -> logits [B, 3].
struct TinyTransformer : nn::Module {
  std::shared_ptr<nn::Linear> in, out;
  std::shared_ptr<nn::TransformerEncoder> enc;
  TinyTransformer() : nn::Module("TinyTransformer") {
    in = register_module("in", std::make_shared<nn::Linear>(8, 16));
    const nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32).dropout(0.0).batch_first(true).norm_first(true));
    enc = register_module("enc", std::make_shared<nn::TransformerEncoder>(layer, 2));
    out = register_module("out", std::make_shared<nn::Linear>(16, 3));
  }
  Variable forward(const Variable& x) override { return out->forward(enc->forward(in->forward(x)).mean({1})); }
};
std::shared_ptr<nn::Module> make_transformer() {
  manual_seed(6);
  return std::make_shared<TinyTransformer>();
}

struct FsdpData {
  Tensor x, y;
};
FsdpData fsdp_data(int64_t n) {
  Generator g(13);
  return {randn({n, 8}, g), randint(0, 3, {n}, g)};
}

std::unique_ptr<optim::Optimizer> make_opt(const std::string& kind, std::vector<Variable> params) {
  if (kind == "sgd") return std::make_unique<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
  return std::make_unique<optim::Adam>(params, optim::AdamOptions(0.01));
}

// `steps` steps over global batches of `global_b`; this rank takes rows [rank*b, (rank+1)*b).
void train(nn::Module& model, optim::Optimizer& opt, const FsdpData& d, int64_t steps, int64_t global_b, int rank,
           int world) {
  const int64_t b = global_b / world;
  for (int64_t s = 0; s < steps; ++s) {
    const Tensor xb = d.x.narrow(0, s * global_b + rank * b, b), yb = d.y.narrow(0, s * global_b + rank * b, b);
    Variable loss = cross_entropy(model(Variable(xb)), yb);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

std::vector<float> flat_of(const std::vector<std::pair<std::string, Tensor>>& state) {
  std::vector<float> out;
  for (const auto& [name, t] : state) {
    const auto v = to_vector<float>(t.contiguous());
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}
std::vector<std::pair<std::string, Tensor>> state_of(const nn::Module& m) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : m.named_parameters()) out.emplace_back(name, v.data());
  return out;
}

// Loads the whole checkpoint into the same network written in PyTorch (load_state_dict,
// strict) and compares its output with ddl's; the format is read by hand (Debian has no
// safetensors package). Exit 0: equal; 1: not; 77: no PyTorch here.
const char* kTorchCheck = R"PY(
import json, struct, sys
try:
    import torch
except ImportError:
    sys.exit(77)
def load(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    out = {}
    for name, e in json.loads(data[8:8 + n]).items():
        if name != "__metadata__":
            b, end = e["data_offsets"]
            out[name] = torch.frombuffer(bytearray(data[8 + n + b:8 + n + end]), dtype=torch.float32).reshape(e["shape"])
    return out
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.ReLU(),
                          torch.nn.Linear(16, 3))
net.load_state_dict(load(sys.argv[1]), strict=True)
io = load(sys.argv[2])
with torch.no_grad():
    got = net(io["x"])
sys.exit(0 if torch.allclose(got, io["y"], rtol=1e-5, atol=1e-6) else 1)
)PY";

}  // namespace

TEST_CASE("FSDP with W ranks of batch b equals one process with batch W*b, and DDP", "[dist][fsdp]") {
  for (int world : {2, 3})
    for (const std::string kind : {"sgd", "adam"}) {
      DYNAMIC_SECTION("world " << world << ", " << kind) {
        test::ParentStoreServer server;
        const int port = server.port();
        auto outs = test::run_processes(world, [&](int rank) {
          const int64_t steps = 3, global_b = 12;
          const FsdpData d = fsdp_data(steps * global_b);
          auto ref_model = make_mlp();
          auto ref_opt = make_opt(kind, ref_model->parameters());
          train(*ref_model, *ref_opt, d, steps, global_b, 0, 1);

          auto pg = test::gloo_group(port, rank, world);
          auto ddp_model = make_mlp();
          DistributedDataParallel ddp(ddp_model, pg);
          auto ddp_opt = make_opt(kind, ddp_model->parameters());
          train(ddp, *ddp_opt, d, steps, global_b, rank, world);

          FullyShardedDataParallel fsdp(make_mlp(), pg);
          DIST_EXPECT(fsdp.units().size() == 4 && fsdp.units()[0].numel == 0,
                      "expected 3 units and an empty root, got ", fsdp.units().size());
          auto opt = make_opt(kind, fsdp.parameters());
          train(fsdp, *opt, d, steps, global_b, rank, world);
          const auto got = flat_of(fsdp.full_state_dict());
          // Float32 sums in another order (the batch mean against the mean of rank means): a bound.
          const double diff = test::max_rel_diff(got, flat_of(state_of(*ref_model)));
          DIST_EXPECT(diff < 2e-5, "rank ", rank, ": max relative difference to one process ", diff);
          // DDP's all-reduce and FSDP's reduce-scatter both add g/W over ranks; with two
          // ranks there is one addition, so the two agree bit for bit.
          const auto ddp_flat = flat_of(state_of(*ddp_model));
          if (world == 2)
            DIST_EXPECT(got == ddp_flat, "rank ", rank, ": FSDP and DDP differ: ", test::max_rel_diff(got, ddp_flat));
          else
            DIST_EXPECT(test::max_rel_diff(got, ddp_flat) < 2e-5, "rank ", rank, ": FSDP and DDP differ");
          DIST_EXPECT(fsdp.stats().reduce_scatters == 3 * steps, "reduce-scatters: ", fsdp.stats().reduce_scatters);
          DIST_EXPECT(fsdp.stats().prefetches > 0, "no all-gather was prefetched");
        });
        INFO(test::describe(outs));
        REQUIRE(test::all_ok(outs));
      }
    }
}

TEST_CASE("FSDP shard gradients are the unwrapped model's", "[dist][fsdp]") {
  // The MLP (three units, an empty root), and a Transformer whose encoder layers are the
  // units (found through TransformerEncoder's forward hooks) and whose input and output
  // Linears form the root unit.
  for (const std::string which : {"mlp", "transformer"}) {
    DYNAMIC_SECTION(which) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(2, [&](int rank) {
        // The same batch on both ranks: the average is the gradient itself.
        const bool mlp = which == "mlp";
        Generator g(3);
        const Tensor x = mlp ? fsdp_data(6).x : randn({3, 5, 8}, g), y = randint(0, 3, {mlp ? 6 : 3}, g);
        auto make = [&]() -> std::shared_ptr<nn::Module> { return mlp ? make_mlp() : make_transformer(); };
        auto ref = make();
        const Tensor ref_out = (*ref)(Variable(x)).data();
        cross_entropy((*ref)(Variable(x)), y).backward();

        auto pg = test::gloo_group(port, rank, 2);
        FullyShardedDataParallel fsdp(make(), pg);
        const Variable out = fsdp(Variable(x));
        DIST_EXPECT(to_vector<float>(out.data()) == to_vector<float>(ref_out), "forward outputs differ");
        cross_entropy(out, y).backward();
        const auto& units = fsdp.units();
        DIST_EXPECT(units.size() == (mlp ? 4u : 3u), "expected ", mlp ? 4 : 3, " units, got ", units.size());
        if (!mlp)
          DIST_EXPECT(units[1].name == "enc.layers.0" && units[2].name == "enc.layers.1" && units[0].numel > 0,
                      "units: ", units[1].name, ", ", units[2].name);
        const auto shards = fsdp.parameters();
        size_t next = 0;
        for (size_t k = 0; k < units.size(); ++k) {
          if (units[k].numel == 0) continue;
          // Unit k's flat gradient from the reference model, padded, then this rank's slice.
          std::vector<float> flat;
          for (const auto& name : units[k].params)
            for (const auto& [n, p] : ref->named_parameters())
              if (n == name) {
                const auto gr = to_vector<float>(p.grad());
                flat.insert(flat.end(), gr.begin(), gr.end());
              }
          flat.resize(units[k].shard_numel * 2, 0.0f);
          const std::vector<float> want(flat.begin() + rank * units[k].shard_numel,
                                        flat.begin() + (rank + 1) * units[k].shard_numel);
          const auto got = to_vector<float>(shards.at(next++).grad());
          DIST_EXPECT(got == want, "unit '", units[k].name, "': shard gradient differs, max rel ",
                      test::max_rel_diff(got, want));
        }
        DIST_EXPECT(next == shards.size(), "shards without a unit");
        // The wrapped module's own parameters hold no gradient: it lives in the shards.
        for (const auto& p : fsdp.module()->parameters()) DIST_EXPECT(!p.grad().defined(), "a full gradient was kept");
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

TEST_CASE("FSDP frees a unit's full parameters outside its forward and backward", "[dist][fsdp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    auto first = std::make_shared<ProbedLinear>(8, 16), last = std::make_shared<ProbedLinear>(16, 3);
    FullyShardedDataParallel fsdp(make_mlp(first, last), pg);
    first->fsdp = last->fsdp = &fsdp;
    const int64_t page = sysconf(_SC_PAGESIZE);  // each unit here fits in one page
    // In backward, when the first unit's gradients arrive, the two later units are freed.
    std::vector<int64_t> in_backward;
    first->fc->weight.register_post_accumulate_grad_hook(
        [&](Variable&) { in_backward.push_back(fsdp.gathered_resident_bytes()); });
    optim::Adam opt(fsdp.parameters(), optim::AdamOptions(0.01));
    const FsdpData d = fsdp_data(8);
    auto freed = [&](const char* when) {
      DIST_EXPECT(fsdp.gathered_resident_bytes() == 0, when, ": ", fsdp.gathered_resident_bytes(),
                  " bytes of full parameters still resident");
      for (const auto& p : fsdp.module()->parameters())
        DIST_EXPECT(p.numel() == 0, when, ": a parameter holds ", p.numel(), " elements");
    };
    freed("after construction");
    for (int step = 0; step < 3; ++step) {
      Variable loss = cross_entropy(fsdp(Variable(d.x.narrow(0, rank * 4, 4))), d.y.narrow(0, rank * 4, 4));
      freed("between forward and backward");
      opt.zero_grad();
      loss.backward();
      freed("after backward");
      opt.step();
    }
    // Inside its forward a unit's own parameters are resident; in the last unit's forward,
    // only they are (the first two units were freed after their forwards).
    DIST_EXPECT(first->seen.size() == 3 && last->seen.size() == 3, "probes ran ", first->seen.size(), " times");
    for (int64_t bytes : first->seen) DIST_EXPECT(bytes > 0, "nothing gathered inside a unit's forward");
    for (int64_t bytes : last->seen)
      DIST_EXPECT(bytes == page, "in the last unit's forward ", bytes, " bytes resident");
    DIST_EXPECT(in_backward.size() == 3, "weight hook ran ", in_backward.size(), " times");
    for (int64_t bytes : in_backward)
      DIST_EXPECT(bytes <= page, "in the first unit's backward ", bytes, " bytes resident");
    // Without grad: gathered for forward, freed after it too.
    {
      NoGradGuard no_grad;
      fsdp(Variable(d.x));
    }
    freed("after a no-grad forward");
    DIST_EXPECT(fsdp.stats().peak_gathered_bytes > 0, "peak not recorded");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("FSDP whole state dict: save at 2 ranks, load in one process and at 3 ranks", "[dist][fsdp]") {
  const std::string dir = test::parent_temp_dir("fsdp_ckpt", "/tmp/ddl_fsdp_ckpt_XXXXXX");
  const std::string path = dir + "/model.safetensors";
  const FsdpData d = fsdp_data(12);
  {
    test::ParentStoreServer server("store2");
    const int port = server.port();
    auto outs = test::run_processes(2, [&](int rank) {
      auto pg = test::gloo_group(port, rank, 2);
      FullyShardedDataParallel fsdp(make_mlp(), pg);
      optim::SGD opt(fsdp.parameters(), optim::SGDOptions(0.1));
      train(fsdp, opt, d, 2, 6, rank, 2);
      fsdp.save_full_state(path);
    });
    INFO(test::describe(outs));
    REQUIRE(test::all_ok(outs));
  }
  // One plain process: the file is an ordinary state of the unwrapped model.
  auto plain = make_mlp();
  const auto before = flat_of(state_of(*plain));
  nn::load_state(*plain, path);
  const auto saved = flat_of(state_of(*plain));
  REQUIRE(saved != before);  // training moved the weights
  const Tensor want = (*plain)(Variable(d.x)).data();
  {
    test::ParentStoreServer server("store3");
    const int port = server.port();
    auto outs = test::run_processes(3, [&](int rank) {
      auto pg = test::gloo_group(port, rank, 3);
      FullyShardedDataParallel fsdp(make_mlp(), pg);
      fsdp.load_full_state(path);
      const auto back = flat_of(fsdp.full_state_dict());
      DIST_EXPECT(back == saved, "rank ", rank, ": reloaded state differs, max rel ", test::max_rel_diff(back, saved));
      const Tensor got = fsdp(Variable(d.x)).data();
      DIST_EXPECT(to_vector<float>(got) == to_vector<float>(want), "rank ", rank, ": outputs differ after loading");
    });
    INFO(test::describe(outs));
    REQUIRE(test::all_ok(outs));
  }
  // PyTorch loads the same file into the same network and computes the same outputs.
  nn::save_safetensors(dir + "/io.safetensors", {{"x", d.x}, {"y", want}});
  { std::ofstream(dir + "/check.py") << kTorchCheck; }
  const int rc = std::system(("/usr/bin/python3 " + dir + "/check.py " + path + " " + dir + "/io.safetensors").c_str());
  std::filesystem::remove_all(dir);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
    WARN("no PyTorch under /usr/bin/python3: the PyTorch load was not checked");
    return;
  }
  REQUIRE(WIFEXITED(rc));
  REQUIRE(WEXITSTATUS(rc) == 0);
}

TEST_CASE("FSDP on one rank trains as the plain model; frozen parameters are refused", "[dist][fsdp]") {
  test::ParentStoreServer server("store1");
  auto pg = test::gloo_group(server.port(), 0, 1);
  const FsdpData d = fsdp_data(8);
  auto plain = make_mlp();
  optim::Adam plain_opt(plain->parameters(), optim::AdamOptions(0.01));
  train(*plain, plain_opt, d, 2, 4, 0, 1);
  FullyShardedDataParallel fsdp(make_mlp(), pg, {.min_num_params = 200});  // one unit (272), the rest the root
  REQUIRE(fsdp.units().size() == 2);
  CHECK(fsdp.units()[1].name == "2");
  CHECK(fsdp.units()[0].numel == 144 + 51);
  optim::Adam opt(fsdp.parameters(), optim::AdamOptions(0.01));
  train(fsdp, opt, d, 2, 4, 0, 1);
  CHECK(flat_of(fsdp.full_state_dict()) == flat_of(state_of(*plain)));

  auto frozen = make_mlp();
  frozen->parameters()[1].requires_grad_(false);
  CHECK_THROWS_WITH(FullyShardedDataParallel(frozen, pg), Catch::Contains("parameter '0.bias' does not require grad"));
}
