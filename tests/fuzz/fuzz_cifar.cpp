// libFuzzer target: the CIFAR-10 and CIFAR-100 binary batch readers (data/cifar.cpp). The
// first byte picks the reader (0: CIFAR-10, 1: CIFAR-100 fine labels, 2: coarse); the rest is
// the test batch. A loaded dataset's first and last examples are fetched too.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_util.h"
#include <ddl/data/cifar.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  if (size < 1) return 0;
  const int mode = data[0] % 3;
  const char* name = mode == 0 ? "test_batch.bin" : "test.bin";
  std::filesystem::remove(dir.path() + "/test_batch.bin");
  std::filesystem::remove(dir.path() + "/test.bin");
  dir.write(name, data + 1, size - 1);
  try {
    auto check = [](const ddl::data::Dataset& d) {
      if (d.size() == 0) return;
      for (int64_t i : {int64_t{0}, d.size() - 1}) {
        const ddl::data::Example e = d.get(i);
        (void)e;
      }
    };
    if (mode == 0) {
      check(ddl::data::CIFAR10(dir.path(), /*train=*/false));
    } else {
      using L = ddl::data::CIFAR100::Label;
      check(ddl::data::CIFAR100(dir.path(), /*train=*/false, {}, mode == 1 ? L::Fine : L::Coarse));
    }
  } catch (const ddl::Error&) {
  }
  return 0;
}
