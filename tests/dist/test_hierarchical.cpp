// ProcessGroupHierarchical over real processes on one machine, told that ranks sit on
// 2 or 3 "hosts" (its local groups then use shared memory, its cross-host groups TCP),
// with equal or unequal numbers of ranks, numbered host by host or interleaved: sum,
// average, max and min all-reduces equal the flat group's (bit for bit on integer-valued
// floats, and on max/min of random floats and negative zeros) for every size (below the
// local size, odd, non-contiguous) and dtype (float16 and bfloat16 included); every rank ends with the same bits on
// random floats; other collectives keep their order with it; DDP over it leaves replicas identical.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/hier/hierarchical_group.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

// host_of_rank for `hosts` hosts of `per_host` ranks, ranks numbered host by host.
std::vector<std::string> layout(int hosts, int per_host) {
  std::vector<std::string> h;
  for (int i = 0; i < hosts; ++i)
    for (int j = 0; j < per_host; ++j) h.push_back("host" + std::to_string(i));
  return h;
}

std::shared_ptr<ProcessGroupHierarchical> make_hier(int port, int rank, const std::vector<std::string>& host_of_rank,
                                                    std::shared_ptr<ProcessGroup>* flat_out) {
  auto store = test::store_client(port, Millis(20000));
  auto flat =
      std::make_shared<ProcessGroupGloo>(std::make_shared<PrefixStore>("flat", store), rank,
                                         static_cast<int>(host_of_rank.size()), test::gloo_options(Millis(20000), 0));
  *flat_out = flat;
  return std::make_shared<ProcessGroupHierarchical>(flat, std::make_shared<PrefixStore>("h", store), host_of_rank,
                                                    test::gloo_options(Millis(20000), 1));
}

// The hierarchical and the flat all-reduce of copies of x with `op`.
std::pair<Tensor, Tensor> both(ProcessGroup& hier, ProcessGroup& flat, const Tensor& x, ReduceOp op) {
  const Tensor a = x.clone(), b = x.clone();
  hier.all_reduce(a, op);
  flat.all_reduce(b, op);
  return {a, b};
}

template <typename T>
bool same(const std::pair<Tensor, Tensor>& ab) {
  return to_vector<T>(ab.first) == to_vector<T>(ab.second);
}

bool same_bits(const Tensor& a, const Tensor& b) { return to_vector<float>(a) == to_vector<float>(b); }

}  // namespace

TEST_CASE("Hierarchical all-reduce equals the flat all-reduce", "[dist][hier]") {
  // Equal hosts; unequal ones (ddlrun -H host0:2,host1:1 and the reverse, 3+1, 2+1+3); ranks
  // of a host not numbered together.
  const std::vector<std::vector<std::string>> layouts = {layout(2, 2),         layout(2, 3),
                                                         {"a", "a", "b"},      {"a", "b", "b"},
                                                         {"a", "a", "a", "b"}, {"a", "b", "c", "a", "c", "c"}};
  for (const auto& host_of_rank : layouts)
    DYNAMIC_SECTION("hosts of the ranks: " << ::Catch::Detail::stringify(host_of_rank)) {
      test::ParentStoreServer server;
      const int port = server.port(), world = static_cast<int>(host_of_rank.size());
      std::set<std::string> names(host_of_rank.begin(), host_of_rank.end());
      const int hosts = static_cast<int>(names.size());
      auto outs = test::run_processes(world, [&](int rank) {
        std::shared_ptr<ProcessGroup> flat;
        auto hier = make_hier(port, rank, host_of_rank, &flat);
        const int per_host = static_cast<int>(std::count(host_of_rank.begin(), host_of_rank.end(), host_of_rank[rank]));
        DIST_EXPECT(hier->hosts() == hosts && hier->local_size() == per_host, hier->describe());
        if (per_host > 1)
          DIST_EXPECT(test::contains(hier->describe(), "shared memory"), "inside a host: ", hier->describe());
        Generator g(100 + rank);
        for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{1001}, int64_t{65536 + 3}}) {
          // Integer-valued floats: every summation order gives the same bits.
          const Tensor x = randint(-50, 50, {n}, g).to(DType::Float32);
          const Tensor a = x.clone(), b = x.clone(), c = x.clone(), d = x.clone();
          hier->all_reduce(a);
          flat->all_reduce(b);
          DIST_EXPECT(same_bits(a, b), "sum of ", n, " elements differs from the flat group's");
          hier->all_reduce(c, ReduceOp::Avg);
          flat->all_reduce(d, ReduceOp::Avg);
          DIST_EXPECT(allclose(c, d, 1e-6, 0), "average of ", n, " elements differs");
          // Max and min pick one rank's value: the same bits on random floats.
          const Tensor r = randn({n}, g);
          DIST_EXPECT(same<float>(both(*hier, *flat, r, ReduceOp::Max)), "max of ", n, " elements differs");
          DIST_EXPECT(same<float>(both(*hier, *flat, r, ReduceOp::Min)), "min of ", n, " elements differs");
          if (n > 1001) continue;  // other dtypes on the short tensors only (time)
          const Tensor r64 = r.to(DType::Float64), i64 = randint(-1000, 1000, {n}, g);
          DIST_EXPECT(same<double>(both(*hier, *flat, r64, ReduceOp::Max)), "float64 max of ", n, " elements differs");
          DIST_EXPECT(same<int64_t>(both(*hier, *flat, i64, ReduceOp::Min)), "int64 min of ", n, " elements differs");
          DIST_EXPECT(same<int64_t>(both(*hier, *flat, i64, ReduceOp::Sum)), "int64 sum of ", n, " elements differs");
          // 2-byte floats (the fp16/bf16 compression hooks' buckets), small integers: exact sums.
          for (DType h : {DType::Float16, DType::BFloat16}) {
            const auto hs = both(*hier, *flat, randint(-8, 8, {n}, g).to(h), ReduceOp::Sum);
            DIST_EXPECT(same<float>({hs.first.to(DType::Float32), hs.second.to(DType::Float32)}), dtype_name(h),
                        " sum of ", n, " elements differs");
          }
        }
        // Negative zeros: their sum is -0.0, which a float sum with zeros (+0.0) would not keep.
        const Tensor nz = full({1001}, -0.0);
        const auto zs = both(*hier, *flat, nz, ReduceOp::Sum);
        DIST_EXPECT(std::signbit(to_vector<float>(zs.first)[1000]) && std::signbit(to_vector<float>(zs.first)[0]),
                    "the sum of negative zeros lost its sign");
        // A non-contiguous tensor (a transposed view) is reduced in place.
        const Tensor m = randint(-9, 9, {6, 4}, g).to(DType::Float32), mt = m.t(), want = m.clone();
        hier->all_reduce(mt);
        flat->all_reduce(want);
        DIST_EXPECT(same_bits(m.contiguous(), want), "transposed view");
        // Random floats: the order differs from the flat ring's, but every rank gets the same bits.
        const Tensor r = randn({4099}, g), hi = r.clone(), lo = r.clone();
        hier->all_reduce(r);
        hi.copy_(r), lo.copy_(r);
        hier->all_reduce(hi, ReduceOp::Max);
        hier->all_reduce(lo, ReduceOp::Min);
        DIST_EXPECT(same_bits(hi, lo), "ranks hold different bits after a sum");
        // Other collectives, queued asynchronously between sums, keep their order.
        const Tensor s1 = full({3}, rank + 1.0), bc = full({2}, rank == 1 ? 7.0 : 0.0), s2 = full({3}, 1.0);
        auto w1 = hier->all_reduce_async(s1);
        auto w2 = hier->broadcast_async(bc, 1);
        auto w3 = hier->all_reduce_async(s2);
        auto w4 = hier->barrier_async();
        for (auto& w : {w1, w2, w3, w4}) w->wait();
        DIST_EXPECT(
            s1[0].item<float>() == world * (world + 1) / 2 && bc[1].item<float>() == 7 && s2[2].item<float>() == world,
            "async results");
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
}

TEST_CASE("DDP over the hierarchical group keeps replicas identical and equals the flat group", "[dist][hier]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(4, [&](int rank) {
    std::shared_ptr<ProcessGroup> flat;
    std::shared_ptr<ProcessGroup> hier = make_hier(port, rank, layout(2, 2), &flat);
    Generator g(3);
    const Tensor xs = randn({16, 1, 8, 8}, g), ys = randint(0, 3, {16}, g);
    const auto train = [&](std::shared_ptr<ProcessGroup> group) {
      auto model = test::make_small_cnn();
      DistributedDataParallel ddp(model, group);
      optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
      for (int s = 0; s < 2; ++s) {
        Variable loss =
            cross_entropy(ddp(Variable(xs.narrow(0, s * 8 + rank * 2, 2))), ys.narrow(0, s * 8 + rank * 2, 2));
        opt.zero_grad();
        loss.backward();
        opt.step();
      }
      std::vector<float> flat_params;
      for (auto& p : model->parameters()) {
        auto v = to_vector<float>(p.data());
        flat_params.insert(flat_params.end(), v.begin(), v.end());
      }
      return flat_params;
    };
    const auto a = train(hier), b = train(flat);
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
    DIST_EXPECT(m < 1e-5, "DDP over the hierarchical group differs from the flat group by ", m);
    const Tensor mine = from_vector(a), hi = mine.clone(), lo = mine.clone();
    flat->all_reduce(hi, ReduceOp::Max);
    flat->all_reduce(lo, ReduceOp::Min);
    DIST_EXPECT(same_bits(hi, lo), "replicas differ");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("Hierarchical group checks its layout and stays flat on one host", "[dist][hier]") {
  auto flat = std::make_shared<ProcessGroupGloo>(std::make_shared<HashStore>(), 0, 1);
  REQUIRE_THROWS_WITH(
      ProcessGroupHierarchical(flat, std::make_shared<HashStore>(), {"a", "b"}, test::gloo_options(Millis(1000), 0)),
      Catch::Contains("2 host names for 1 ranks"));
  std::string why;
  // One host: the flat group stays.
  REQUIRE(maybe_hierarchical(flat, std::make_shared<HashStore>(), test::gloo_options(Millis(1000), 0), &why) == flat);
  REQUIRE_THAT(why, Catch::Contains("one host"));
}
