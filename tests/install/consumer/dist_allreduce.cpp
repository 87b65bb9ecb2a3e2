// A user's distributed program built by tests/install against an installed ddl: every
// rank all_reduces a tensor holding rank + 1 and checks the closed-form sum
// world * (world + 1) / 2. Started as N processes with RANK and WORLD_SIZE set (ddlrun
// or by hand); argv[1], if given, is the init method (e.g. file:///fresh/dir).
#include <cstdio>

#include <ddl/dist/dist.h>
#include <ddl/tensor/core/factory.h>

int main(int argc, char** argv) {
  namespace dist = ddl::dist;
  dist::InitOptions opts;
  if (argc > 1) opts.init_method = argv[1];
  dist::init_process_group("gloo", opts);
  const int rank = dist::get_rank(), world = dist::get_world_size();

  ddl::Tensor t = ddl::full({4}, rank + 1.0);
  dist::default_group().all_reduce(t);
  const double want = world * (world + 1) / 2.0;
  const float* v = t.data<float>();
  for (int i = 0; i < 4; ++i) {
    if (v[i] != want) {
      std::fprintf(stderr, "dist_allreduce: rank %d/%d: element %d is %g, want %g\n", rank, world, i, v[i], want);
      return 1;
    }
  }
  dist::destroy_process_group();
  std::printf("dist_allreduce: rank %d/%d: all_reduce sum %g ok\n", rank, world, want);
  return 0;
}
