// ddlrun test helper: joins the job through init_process_group, all-reduces its rank and
// checks the closed form 0 + 1 + ... + (N-1); prints "sum ok" on success.
#include <cstdio>

#include <ddl/dist/dist.h>
#include <ddl/tensor/core/factory.h>

int main() {
  ddl::dist::InitOptions opts;
  opts.timeout = std::chrono::seconds(30);
  auto& pg = *ddl::dist::init_process_group("gloo", opts);
  ddl::Tensor t = ddl::full(ddl::Shape{1000}, double(pg.rank()));
  pg.all_reduce(t);
  const float expected = pg.size() * (pg.size() - 1) / 2.0f;
  for (int i = 0; i < 1000; ++i)
    if (t.data<float>()[i] != expected) {
      std::printf("sum wrong: %f != %f\n", t.data<float>()[i], expected);
      return 1;
    }
  std::printf("sum ok\n%s", pg.stats().summary().c_str());
  ddl::dist::destroy_process_group();
  return 0;
}
