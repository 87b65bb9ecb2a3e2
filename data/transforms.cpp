// Transform kernels: plain loops over contiguous [C, H, W] buffers, run per
// sample inside loader threads (never parallel_for: the loader already runs one
// sample per thread, and nested OpenMP teams would oversubscribe the cores).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <ddl/data/transforms.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::data {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Views x (dim >= 2) as [C, H, W] with all leading dims folded into C.
void image_dims(const Tensor& x, const char* op, int64_t& c, int64_t& h, int64_t& w) {
  DDL_CHECK(x.defined() && x.dim() >= 2, op, ": expected an image [C, H, W] or [H, W], got ",
            x.defined() ? describe(x) : std::string("an undefined tensor"));
  h = x.size(-2);
  w = x.size(-1);
  c = x.numel() / std::max<int64_t>(h * w, 1);
}

Shape with_hw(const Tensor& x, int64_t h, int64_t w) {
  Shape s = x.shape();
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t epoch, uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ index);
}

TransformContext::TransformContext(uint64_t seed, int64_t epoch, int64_t index)
    : seed_(seed),
      epoch_(epoch),
      index_(index),
      gen_(mix_seed(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index))) {}

double TransformContext::uniform() {
  uint32_t r[4];
  philox4x32(gen_.advance(1), gen_.seed(), r);
  return static_cast<double>((static_cast<uint64_t>(r[0]) << 21) ^ (r[1] >> 11)) * 0x1.0p-53;
}

int64_t TransformContext::randint(int64_t low, int64_t high) {
  DDL_CHECK(low < high, "TransformContext::randint: empty range [", low, ", ", high, ")");
  const int64_t span = high - low;
  return low + std::min<int64_t>(static_cast<int64_t>(uniform() * static_cast<double>(span)), span - 1);
}

Tensor ToTensor::operator()(const Tensor& x, TransformContext&) const {
  DDL_CHECK(x.defined() && x.dtype() == DType::UInt8, "ToTensor: expected a uint8 image, got ",
            x.defined() ? describe(x) : std::string("an undefined tensor"));
  // Divide (not multiply by 1/255) to match torchvision's ToTensor bit for bit.
  if (from_ == Layout::CHW) {
    const Tensor src = x.contiguous();
    Tensor out = empty(src.shape(), DType::Float32);
    const uint8_t* s = src.data<uint8_t>();
    float* o = out.data<float>();
    for (int64_t i = 0, n = src.numel(); i < n; ++i) o[i] = static_cast<float>(s[i]) / 255.0f;
    return out;
  }
  DDL_CHECK(x.dim() == 3, "ToTensor: HWC layout needs a [H, W, C] image, got ", describe(x));
  // x: [H, W, C] -> out: [C, H, W]
  const Tensor src = x.contiguous();
  const int64_t h = src.size(0), w = src.size(1), c = src.size(2);
  Tensor out = empty({c, h, w}, DType::Float32);
  const uint8_t* s = src.data<uint8_t>();
  float* o = out.data<float>();
  for (int64_t p = 0; p < h * w; ++p)
    for (int64_t k = 0; k < c; ++k) o[k * h * w + p] = static_cast<float>(s[p * c + k]) / 255.0f;
  return out;
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  DDL_CHECK(!mean_.empty() && mean_.size() == std_.size(),
            "Normalize: mean and std need the same, non-zero length, got ", mean_.size(), " and ", std_.size());
  for (double s : std_) DDL_CHECK(s > 0, "Normalize: std must be positive, got ", s);
}

Tensor Normalize::operator()(const Tensor& x, TransformContext&) const {
  DDL_CHECK(x.defined() && x.dim() == 3 && is_floating(x.dtype()),
            "Normalize: expected a float image [C, H, W] (apply ToTensor first), got ",
            x.defined() ? describe(x) : std::string("an undefined tensor"));
  const int64_t c = x.size(0), hw = x.size(1) * x.size(2);
  const int64_t n = static_cast<int64_t>(mean_.size());
  DDL_CHECK(n == 1 || n == c, "Normalize: ", n, " mean/std values for an image with ", c, " channels");
  const Tensor src = x.contiguous();
  Tensor out = empty(src.shape(), src.dtype());
  DDL_DISPATCH_FLOAT(src.dtype(), "Normalize", [&] {
    const scalar_t* s = src.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    for (int64_t k = 0; k < c; ++k) {
      // Subtract then divide, as torchvision does, so results match it bit for bit.
      const scalar_t m = static_cast<scalar_t>(mean_[n == 1 ? 0 : k]), d = static_cast<scalar_t>(std_[n == 1 ? 0 : k]);
      for (int64_t i = k * hw; i < (k + 1) * hw; ++i) o[i] = (s[i] - m) / d;
    }
  });
  return out;
}

namespace {

// Copies the window rows [top, top + oh) x cols [left, left + ow) of the image
// `x` padded with `fill` on every side (top/left may be negative, the window may
// run past the bottom/right edge) without building the padded image.
// x: [C, H, W] -> out: [C, oh, ow]
Tensor window(const Tensor& x, int64_t top, int64_t left, int64_t oh, int64_t ow, double fill, const char* op) {
  int64_t c, h, w;
  image_dims(x, op, c, h, w);
  const Tensor src = x.contiguous();
  Tensor out = empty(with_hw(x, oh, ow), src.dtype());
  // Columns j in [j0, j1) of the window read source columns left + j.
  const int64_t j0 = std::clamp<int64_t>(-left, 0, ow), j1 = std::clamp<int64_t>(w - left, j0, ow);
  DDL_DISPATCH_ALL(src.dtype(), op, [&] {
    const scalar_t* s = src.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    const scalar_t f = static_cast<scalar_t>(fill);
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t i = 0; i < oh; ++i) {
        scalar_t* orow = o + (k * oh + i) * ow;
        const int64_t si = top + i;
        if (si < 0 || si >= h) {
          std::fill(orow, orow + ow, f);
          continue;
        }
        std::fill(orow, orow + j0, f);
        if (j1 > j0) std::memcpy(orow + j0, s + (k * h + si) * w + left + j0, (j1 - j0) * sizeof(scalar_t));
        std::fill(orow + j1, orow + ow, f);
      }
    }
  });
  return out;
}

}  // namespace

Pad::Pad(int64_t left, int64_t top, int64_t right, int64_t bottom, double fill)
    : left_(left), top_(top), right_(right), bottom_(bottom), fill_(fill) {
  DDL_CHECK(left >= 0 && top >= 0 && right >= 0 && bottom >= 0, "Pad: padding must be non-negative, got (left ", left,
            ", top ", top, ", right ", right, ", bottom ", bottom, ")");
}

Tensor Pad::operator()(const Tensor& x, TransformContext&) const {
  int64_t c, h, w;
  image_dims(x, "Pad", c, h, w);
  return window(x, -top_, -left_, h + top_ + bottom_, w + left_ + right_, fill_, "Pad");
}

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding, double fill)
    : height_(height), width_(width), padding_(padding), fill_(fill) {
  DDL_CHECK(height > 0 && width > 0 && padding >= 0, "RandomCrop: need a positive size and non-negative padding, got ",
            height, "x", width, " with padding ", padding);
}

Tensor RandomCrop::operator()(const Tensor& x, TransformContext& ctx) const {
  int64_t c, h, w;
  image_dims(x, "RandomCrop", c, h, w);
  const int64_t ph = h + 2 * padding_, pw = w + 2 * padding_;
  DDL_CHECK(ph >= height_ && pw >= width_, "RandomCrop: crop ", height_, "x", width_, " is larger than the image ", h,
            "x", w, " padded by ", padding_);
  const int64_t top = ctx.randint(0, ph - height_ + 1);
  const int64_t left = ctx.randint(0, pw - width_ + 1);
  return window(x, top - padding_, left - padding_, height_, width_, fill_, "RandomCrop");
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  DDL_CHECK(p >= 0 && p <= 1, "RandomHorizontalFlip: probability ", p, " outside [0, 1]");
}

Tensor RandomHorizontalFlip::operator()(const Tensor& x, TransformContext& ctx) const {
  int64_t c, h, w;
  image_dims(x, "RandomHorizontalFlip", c, h, w);
  if (!(ctx.uniform() < p_)) return x;
  const Tensor src = x.contiguous();
  Tensor out = empty(src.shape(), src.dtype());
  // x: [C*H rows, W] -> each row reversed
  DDL_DISPATCH_ALL(src.dtype(), "RandomHorizontalFlip", [&] {
    const scalar_t* s = src.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    for (int64_t r = 0; r < c * h; ++r) std::reverse_copy(s + r * w, s + (r + 1) * w, o + r * w);
  });
  return out;
}

Resize::Resize(int64_t height, int64_t width) : height_(height), width_(width) {
  DDL_CHECK(height > 0 && width > 0, "Resize: need a positive size, got ", height, "x", width);
}

namespace {

// Source taps for one axis, as PyTorch's upsample_bilinear2d with align_corners
// = false: src = (dst + 0.5) * in / out - 0.5, clamped below at 0.
template <typename acc_t>
void bilinear_taps(int64_t in, int64_t out, std::vector<int64_t>& i0, std::vector<int64_t>& i1,
                   std::vector<acc_t>& l1) {
  const acc_t scale = static_cast<acc_t>(in) / static_cast<acc_t>(out);
  i0.resize(out), i1.resize(out), l1.resize(out);
  for (int64_t d = 0; d < out; ++d) {
    acc_t src = scale * (static_cast<acc_t>(d) + acc_t(0.5)) - acc_t(0.5);
    if (src < 0) src = 0;
    const int64_t i = static_cast<int64_t>(src);
    i0[d] = i;
    i1[d] = i + (i < in - 1 ? 1 : 0);
    l1[d] = src - static_cast<acc_t>(i);
  }
}

// x: [C, H, W] (scalar_t) -> out: [C, oh, ow], interpolating in acc_t.
template <typename scalar_t, typename acc_t>
void resize_bilinear(const scalar_t* s, scalar_t* o, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  std::vector<int64_t> y0, y1, x0, x1;
  std::vector<acc_t> ly, lx;
  bilinear_taps<acc_t>(h, oh, y0, y1, ly);
  bilinear_taps<acc_t>(w, ow, x0, x1, lx);
  for (int64_t k = 0; k < c; ++k) {
    const scalar_t* img = s + k * h * w;
    for (int64_t i = 0; i < oh; ++i) {
      const scalar_t* r0 = img + y0[i] * w;
      const scalar_t* r1 = img + y1[i] * w;
      const acc_t b = ly[i], a = acc_t(1) - b;
      scalar_t* orow = o + (k * oh + i) * ow;
      for (int64_t j = 0; j < ow; ++j) {
        const acc_t q = lx[j], p = acc_t(1) - q;
        const acc_t v = a * (p * static_cast<acc_t>(r0[x0[j]]) + q * static_cast<acc_t>(r0[x1[j]])) +
                        b * (p * static_cast<acc_t>(r1[x0[j]]) + q * static_cast<acc_t>(r1[x1[j]]));
        if constexpr (std::is_integral_v<scalar_t>)
          orow[j] = static_cast<scalar_t>(std::clamp<acc_t>(std::nearbyint(v), 0, 255));
        else
          orow[j] = static_cast<scalar_t>(v);
      }
    }
  }
}

}  // namespace

Tensor Resize::operator()(const Tensor& x, TransformContext&) const {
  int64_t c, h, w;
  image_dims(x, "Resize", c, h, w);
  DDL_CHECK(h > 0 && w > 0, "Resize: cannot resize an empty image ", describe(x));
  const Tensor src = x.contiguous();
  Tensor out = empty(with_hw(x, height_, width_), src.dtype());
  switch (src.dtype()) {
    case DType::UInt8:
      resize_bilinear<uint8_t, float>(src.data<uint8_t>(), out.data<uint8_t>(), c, h, w, height_, width_);
      break;
    case DType::Float32:
      resize_bilinear<float, float>(src.data<float>(), out.data<float>(), c, h, w, height_, width_);
      break;
    case DType::Float64:
      resize_bilinear<double, double>(src.data<double>(), out.data<double>(), c, h, w, height_, width_);
      break;
    default:
      DDL_CHECK(false, "Resize: expected a uint8, float32 or float64 image, got ", describe(x));
  }
  return out;
}

Tensor Compose::operator()(const Tensor& x, TransformContext& ctx) const {
  Tensor y = x;
  for (const Transform& t : transforms_) {
    DDL_CHECK(static_cast<bool>(t), "Compose: holds an empty transform");
    y = t(y, ctx);
  }
  return y;
}

}  // namespace ddl::data
