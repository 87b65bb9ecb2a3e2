// Transforms: known values (ToTensor, Normalize, Pad, Resize), RandomCrop and
// RandomHorizontalFlip against explicit padding/mirroring, and the
// (seed, epoch, index) determinism of the transform context.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include <ddl/data/transforms.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;

namespace {

Tensor u8(const std::vector<int>& values, const Shape& shape) {
  std::vector<uint8_t> v(values.begin(), values.end());
  return from_vector(v, shape);
}

// A uint8 [c, h, w] image whose pixels encode their position.
Tensor ramp(int64_t c, int64_t h, int64_t w) {
  std::vector<uint8_t> v(static_cast<size_t>(c * h * w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 7 + 3) % 251);
  return from_vector(v, {c, h, w});
}

}  // namespace

TEST_CASE("ToTensor divides by 255 and turns HWC into CHW", "[transforms]") {
  TransformContext ctx(0, 0, 0);
  const Tensor chw = ToTensor()(u8({0, 51, 255, 102}, {1, 2, 2}), ctx);
  REQUIRE(chw.dtype() == DType::Float32);
  REQUIRE(chw.shape() == Shape{1, 2, 2});
  REQUIRE(to_vector<float>(chw) == std::vector<float>{0.0f, 51.0f / 255.0f, 1.0f, 102.0f / 255.0f});
  // [H=1, W=2, C=3] -> [3, 1, 2]
  const Tensor hwc = ToTensor(ToTensor::Layout::HWC)(u8({1, 2, 3, 4, 5, 6}, {1, 2, 3}), ctx);
  REQUIRE(hwc.shape() == Shape{3, 1, 2});
  const auto v = to_vector<float>(add(mul(hwc, 255.0), 0.5));
  std::vector<int> got(v.begin(), v.end());
  REQUIRE(got == std::vector<int>{1, 4, 2, 5, 3, 6});
  // A non-contiguous view is read correctly.
  const Tensor img = ramp(3, 4, 5);
  REQUIRE(to_vector<float>(ToTensor()(img.slice(2, 1, 5, 2), ctx)) ==
          to_vector<float>(ToTensor()(img.slice(2, 1, 5, 2).contiguous(), ctx)));
  REQUIRE_THROWS_WITH(ToTensor()(ones({2, 2}), ctx), Catch::Contains("ToTensor") && Catch::Contains("uint8"));
}

TEST_CASE("Normalize subtracts the mean and divides by the std per channel", "[transforms]") {
  TransformContext ctx(0, 0, 0);
  const Tensor x = from_vector<float>({0.5f, 1.0f, 0.0f, 0.25f}, {2, 1, 2});
  const Tensor y = Normalize({0.5, 0.0}, {0.25, 0.5})(x, ctx);
  REQUIRE(to_vector<float>(y) == std::vector<float>{0.0f, 2.0f, 0.0f, 0.5f});
  REQUIRE(to_vector<float>(x) == std::vector<float>{0.5f, 1.0f, 0.0f, 0.25f});  // input untouched
  REQUIRE(to_vector<float>(Normalize({1.0}, {2.0})(x, ctx)) == std::vector<float>{-0.25f, 0.0f, -0.5f, -0.375f});
  REQUIRE_THROWS_WITH(Normalize({0.5, 0.5, 0.5}, {1, 1, 1})(x, ctx),
                      Catch::Contains("3 mean/std values") && Catch::Contains("2 channels"));
  REQUIRE_THROWS_WITH(Normalize({0.5}, {0.0}), Catch::Contains("std must be positive"));
  REQUIRE_THROWS_WITH(Normalize({0.5}, {1.0})(ramp(1, 2, 2), ctx), Catch::Contains("apply ToTensor first"));
}

TEST_CASE("Pad surrounds the image with the fill value", "[transforms]") {
  TransformContext ctx(0, 0, 0);
  const Tensor x = u8({1, 2, 3, 4}, {1, 2, 2});
  const Tensor y = Pad(1, 0, 0, 1, 9)(x, ctx);  // left 1, bottom 1
  REQUIRE(y.shape() == Shape{1, 3, 3});
  REQUIRE(to_vector<int>(y) == std::vector<int>{9, 1, 2, 9, 3, 4, 9, 9, 9});
  const Tensor f = Pad(2)(ones({2, 1, 1}), ctx);
  REQUIRE(f.shape() == Shape{2, 5, 5});
  REQUIRE(sum(f).item() == 2.0);
  REQUIRE(f.select(0, 1).select(0, 2).select(0, 2).item() == 1.0);
}

TEST_CASE("RandomCrop cuts a window of the padded image, the same one for the same context", "[transforms]") {
  const Tensor img = ramp(3, 8, 8);
  TransformContext pad_ctx(0, 0, 0);
  const Tensor padded = Pad(2)(img, pad_ctx);  // [3, 12, 12]
  const RandomCrop crop(8, 8, 2);
  std::set<std::pair<int64_t, int64_t>> offsets;
  for (int64_t index = 0; index < 200; ++index) {
    TransformContext ctx(11, 0, index);
    const Tensor out = crop(img, ctx);
    REQUIRE(out.shape() == Shape{3, 8, 8});
    // Which window of the padded image is it? (Pixels are position-coded, so exactly one fits.)
    int matches = 0;
    for (int64_t t = 0; t <= 4; ++t)
      for (int64_t l = 0; l <= 4; ++l)
        if (to_vector<int>(padded.narrow(1, t, 8).narrow(2, l, 8)) == to_vector<int>(out)) {
          ++matches;
          offsets.insert({t, l});
        }
    REQUIRE(matches == 1);
    TransformContext again(11, 0, index);
    REQUIRE(to_vector<int>(crop(img, again)) == to_vector<int>(out));
  }
  REQUIRE(offsets.size() == 25);  // every offset occurs
  // Float images and asymmetric crops work too.
  TransformContext ctx(1, 2, 3);
  REQUIRE(RandomCrop(3, 5)(ones({2, 4, 6}), ctx).shape() == Shape{2, 3, 5});
  REQUIRE_THROWS_WITH(RandomCrop(10, 10)(img, ctx), Catch::Contains("RandomCrop") && Catch::Contains("larger"));
}

TEST_CASE("RandomHorizontalFlip mirrors the width with probability p", "[transforms]") {
  const Tensor img = u8({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  TransformContext ctx(0, 0, 0);
  REQUIRE(to_vector<int>(RandomHorizontalFlip(1.0)(img, ctx)) == std::vector<int>{3, 2, 1, 6, 5, 4});
  REQUIRE(to_vector<int>(RandomHorizontalFlip(0.0)(img, ctx)) == std::vector<int>{1, 2, 3, 4, 5, 6});
  int flipped = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    TransformContext c(5, 1, i);
    flipped += to_vector<int>(RandomHorizontalFlip(0.5)(img, c))[0] == 3;
  }
  REQUIRE(flipped > 900);
  REQUIRE(flipped < 1100);
}

TEST_CASE("Resize is bilinear with align_corners=false, like torch.nn.functional.interpolate", "[transforms]") {
  TransformContext ctx(0, 0, 0);
  // F.interpolate([[1, 2], [3, 4]], size=(4, 4), mode='bilinear', align_corners=False)
  const Tensor up = Resize(4, 4)(from_vector<float>({1, 2, 3, 4}, {1, 2, 2}), ctx);
  REQUIRE(to_vector<float>(up) == std::vector<float>{1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f,
                                                     3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f});
  // arange(16).view(4, 4) -> 2x2 averages 2x2 blocks' centres: 2.5 4.5 10.5 12.5
  const Tensor grid = arange(0.0, 16.0, 1.0, DType::Float32).reshape({1, 4, 4});
  REQUIRE(to_vector<float>(Resize(2, 2)(grid, ctx)) == std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  // A linear ramp is reproduced exactly at the clamped source coordinates.
  const auto out = to_vector<float>(Resize(3, 5)(grid, ctx));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      const double sy = std::clamp((i + 0.5) * 4.0 / 3.0 - 0.5, 0.0, 3.0);
      const double sx = std::clamp((j + 0.5) * 4.0 / 5.0 - 0.5, 0.0, 3.0);
      REQUIRE(out[i * 5 + j] == Approx(4 * sy + sx).margin(1e-5));
    }
  // uint8 images are interpolated in float and rounded.
  const Tensor small = u8({0, 255, 255, 0}, {1, 2, 2});
  REQUIRE(to_vector<int>(Resize(4, 4)(small, ctx)) ==
          std::vector<int>{0, 64, 191, 255, 64, 96, 159, 191, 191, 159, 96, 64, 255, 191, 64, 0});
  // Same size: unchanged.
  const Tensor img = ramp(3, 5, 7);
  REQUIRE(to_vector<int>(Resize(5, 7)(img, ctx)) == to_vector<int>(img));
}

TEST_CASE("Compose and Lambda chain transforms sharing one context", "[transforms]") {
  const Transform pipeline = Compose({ToTensor(), Lambda([](const Tensor& x) { return mul(x, 2.0); }),
                                      RandomHorizontalFlip(1.0), Normalize({1.0}, {1.0})});
  TransformContext ctx(0, 0, 0);
  const Tensor y = pipeline(u8({0, 255}, {1, 1, 2}), ctx);
  REQUIRE(to_vector<float>(y) == std::vector<float>{1.0f, -1.0f});
  // A custom random transform is any callable taking the context.
  const Transform noisy = [](const Tensor& x, TransformContext& c) { return add(x, c.uniform()); };
  TransformContext a(3, 4, 5), b(3, 4, 5);
  REQUIRE(to_vector<float>(noisy(zeros({2}), a)) == to_vector<float>(noisy(zeros({2}), b)));
}

TEST_CASE("the transform context depends on seed, epoch and index only", "[transforms]") {
  auto draws = [](uint64_t seed, int64_t epoch, int64_t index) {
    TransformContext c(seed, epoch, index);
    std::vector<double> v;
    for (int i = 0; i < 4; ++i) v.push_back(c.uniform());
    v.push_back(static_cast<double>(c.randint(0, 1000)));
    return v;
  };
  REQUIRE(draws(1, 2, 3) == draws(1, 2, 3));
  REQUIRE(draws(1, 2, 3) != draws(1, 3, 3));
  REQUIRE(draws(1, 2, 3) != draws(1, 2, 4));
  REQUIRE(draws(1, 2, 3) != draws(2, 2, 3));
  REQUIRE(draws(0, 1, 0) != draws(0, 0, 1));  // the hash is not symmetric
  TransformContext c(0, 0, 0);
  for (int i = 0; i < 1000; ++i) {
    const double u = c.uniform();
    REQUIRE((u >= 0.0 && u < 1.0));
    const int64_t k = c.randint(-2, 3);
    REQUIRE((k >= -2 && k < 3));
  }
}
