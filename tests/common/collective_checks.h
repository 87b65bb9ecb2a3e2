// Every collective against its closed-form result, for any world size: the same body runs
// with thread ranks (HashStore) and process ranks (TCPStore). Values depend on rank and
// element index so a misplaced chunk shows up, not just a wrong total.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/common/harness.h"
#include <ddl/dist/process_group.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::test {

// A tensor of `n` elements with t[i] = f(i), in dtype T.
template <typename T, typename F>
Tensor make(int64_t n, F f) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(f(i));
  return from_vector<T>(v, Shape{n});
}

template <typename T, typename F>
void expect_values(const Tensor& t, F expected, const std::string& what) {
  auto v = to_vector<T>(t);
  for (size_t i = 0; i < v.size(); ++i)
    DIST_EXPECT(v[i] == static_cast<T>(expected(int64_t(i))), what, ": element ", i, " is ", v[i], ", expected ",
                static_cast<T>(expected(int64_t(i))));
}

template <typename T>
void check_reductions(dist::ProcessGroup& pg, int64_t n) {
  using dist::ReduceOp;
  const int r = pg.rank(), w = pg.size();
  const int64_t tri = int64_t(w) * (w + 1) / 2;  // sum of (rank + 1)
  auto mine = [&](int64_t i) { return (r + 1) * (i % 5 + 1); };

  Tensor t = make<T>(n, mine);
  pg.all_reduce(t);
  expect_values<T>(
      t, [&](int64_t i) { return tri * (i % 5 + 1); }, "all_reduce sum");
  t = make<T>(n, mine);
  pg.all_reduce(t, ReduceOp::Max);
  expect_values<T>(
      t, [&](int64_t i) { return w * (i % 5 + 1); }, "all_reduce max");
  t = make<T>(n, mine);
  pg.all_reduce(t, ReduceOp::Min);
  expect_values<T>(
      t, [&](int64_t i) { return i % 5 + 1; }, "all_reduce min");
  if constexpr (std::is_floating_point_v<T>) {
    t = make<T>(n, mine);
    pg.all_reduce(t, ReduceOp::Avg);
    expect_values<T>(
        t, [&](int64_t i) { return T(tri) / T(w) * T(i % 5 + 1); }, "all_reduce avg");
  }
  // reduce to the last rank: only the root changes.
  const int root = w - 1;
  t = make<T>(n, mine);
  pg.reduce(t, root);
  if (r == root)
    expect_values<T>(
        t, [&](int64_t i) { return tri * (i % 5 + 1); }, "reduce at root");
  else
    expect_values<T>(t, mine, "reduce leaves non-roots unchanged");
  // reduce_scatter: chunk r of the sum over ranks of (rank + 1) * (j + 1).
  Tensor in = make<T>(n * w, [&](int64_t j) { return (r + 1) * (j + 1); });
  Tensor out = make<T>(n, [](int64_t) { return -1; });
  pg.reduce_scatter(out, in);
  expect_values<T>(
      out, [&](int64_t i) { return tri * (r * n + i + 1); }, "reduce_scatter");
}

template <typename T>
void check_data_movement(dist::ProcessGroup& pg, int64_t n) {
  const int r = pg.rank(), w = pg.size();
  // broadcast from the last rank.
  Tensor t = make<T>(n, [&](int64_t i) { return r == w - 1 ? i : -1; });
  pg.broadcast(t, w - 1);
  expect_values<T>(
      t, [](int64_t i) { return i; }, "broadcast");
  // all_gather: rank q's part holds q*100 + i.
  Tensor in = make<T>(n, [&](int64_t i) { return r * 100 + i; });
  Tensor out = make<T>(n * w, [](int64_t) { return -1; });
  pg.all_gather(out, in);
  expect_values<T>(
      out, [&](int64_t j) { return (j / std::max<int64_t>(n, 1)) * 100 + j % std::max<int64_t>(n, 1); }, "all_gather");
  // gather to rank 0.
  Tensor g = r == 0 ? make<T>(n * w, [](int64_t) { return -1; }) : Tensor();
  pg.gather(g, in, 0);
  if (r == 0)
    expect_values<T>(
        g, [&](int64_t j) { return (j / std::max<int64_t>(n, 1)) * 100 + j % std::max<int64_t>(n, 1); }, "gather");
  // scatter from rank 0: element j of the root's input is 2j.
  Tensor src = r == 0 ? make<T>(n * w, [](int64_t j) { return 2 * j; }) : Tensor();
  Tensor s = make<T>(n, [](int64_t) { return -1; });
  pg.scatter(s, src, 0);
  expect_values<T>(
      s, [&](int64_t i) { return 2 * (r * n + i); }, "scatter");
  // all_to_all: chunk q of rank r's input is r*1000 + q*10 + i; it lands as chunk r on rank q.
  Tensor a = make<T>(
      n * w, [&](int64_t j) { return r * 1000 + (j / std::max<int64_t>(n, 1)) * 10 + j % std::max<int64_t>(n, 1); });
  Tensor b = make<T>(n * w, [](int64_t) { return -1; });
  pg.all_to_all(b, a);
  expect_values<T>(
      b, [&](int64_t j) { return (j / std::max<int64_t>(n, 1)) * 1000 + r * 10 + j % std::max<int64_t>(n, 1); },
      "all_to_all");
}

// Every collective, several sizes (0, 1, one not divisible by the world size, a few
// segments' worth) and dtypes; then send/recv around a ring, async handles and a strided view.
inline void check_all_collectives(dist::ProcessGroup& pg) {
  for (int64_t n : {0, 1, 7, 1000}) {
    check_reductions<float>(pg, n);
    check_data_movement<float>(pg, n);
  }
  check_reductions<double>(pg, 13);
  check_reductions<int64_t>(pg, 13);
  check_data_movement<int64_t>(pg, 13);
  check_reductions<float>(pg, 300'001);  // many Gloo segments
  pg.barrier();

  const int r = pg.rank(), w = pg.size();
  if (w > 1) {
    // Ring: each rank sends its rank to the next one, tagged, recv posted first.
    Tensor got = zeros(Shape{5}, DType::Int64);
    auto rw = pg.recv_async(got, (r + w - 1) % w, 7);
    auto sw = pg.send_async(make<int64_t>(5, [&](int64_t i) { return r * 10 + i; }), (r + 1) % w, 7);
    sw->wait();
    rw->wait();
    expect_values<int64_t>(
        got, [&](int64_t i) { return ((r + w - 1) % w) * 10 + i; }, "send/recv ring");
  }
  // Async: several collectives in flight, completed in order.
  std::vector<Tensor> ts;
  std::vector<std::shared_ptr<dist::Work>> works;
  for (int k = 0; k < 4; ++k) {
    ts.push_back(make<float>(64, [&](int64_t) { return r + k; }));
    works.push_back(pg.all_reduce_async(ts.back()));
  }
  for (int k = 0; k < 4; ++k) {
    works[k]->wait();
    DIST_EXPECT(works[k]->is_completed() && works[k]->is_success(), "async work ", k);
    expect_values<float>(
        ts[k], [&](int64_t) { return w * (w - 1) / 2 + w * k; }, "async all_reduce");
  }
  // A non-contiguous view (a transpose) is reduced in place through a copy.
  Tensor base = make<float>(24, [&](int64_t i) { return i * (r + 1); }).view(Shape{4, 6});
  Tensor view = base.t();
  pg.all_reduce(view);
  expect_values<float>(
      base.view(Shape{24}), [&](int64_t i) { return i * (w * (w + 1) / 2); }, "all_reduce of a transposed view");
}

}  // namespace ddl::test
