// Per-sample transforms on image tensors [C, H, W] (uint8 or float), in the
// spirit of torchvision: ToTensor, Normalize, Pad, RandomCrop,
// RandomHorizontalFlip, Resize, Compose, Lambda. Each is a small callable that
// converts to `Transform`. Random ones draw only from the TransformContext, which
// is seeded from (seed, epoch, sample index): see Note [Reproducible augmentation].
// Transforms never modify their input (datasets hand out views of their memory).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ddl/tensor/core/random.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::data {

// Note [Reproducible augmentation]
// A random transform must give sample i of epoch e the same result whichever
// loader thread or rank processes it, so no transform keeps a generator of its
// own. Every call gets a fresh Generator seeded by a hash of (seed, epoch,
// index) and draws from it in a fixed order; change the loader seed or the
// epoch and all draws change, change the thread count and none do.
class TransformContext {
 public:
  TransformContext(uint64_t seed, int64_t epoch, int64_t index);
  uint64_t seed() const { return seed_; }
  int64_t epoch() const { return epoch_; }
  int64_t index() const { return index_; }
  Generator& generator() { return gen_; }
  // Uniform in [0, 1) (53 random bits); each call advances the generator.
  double uniform();
  // Uniform integer in [low, high); requires low < high.
  int64_t randint(int64_t low, int64_t high);

 private:
  uint64_t seed_;
  int64_t epoch_;
  int64_t index_;
  Generator gen_;
};

// The stateless 64-bit mix used to seed per-sample generators (splitmix64-based).
uint64_t mix_seed(uint64_t seed, uint64_t epoch, uint64_t index);

using Transform = std::function<Tensor(const Tensor&, TransformContext&)>;

// uint8 -> float32 divided by 255. CHW (default) accepts any shape and keeps it;
// HWC takes [H, W, C] and returns [C, H, W].
class ToTensor {
 public:
  enum class Layout { CHW, HWC };
  explicit ToTensor(Layout from = Layout::CHW) : from_(from) {}
  Tensor operator()(const Tensor& x, TransformContext&) const;

 private:
  Layout from_;
};

// (x - mean[c]) / std[c] per channel of a float [C, H, W] tensor; one value
// applies to every channel. Requires std > 0.
class Normalize {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor operator()(const Tensor& x, TransformContext&) const;

 private:
  std::vector<double> mean_, std_;
};

// Constant padding of the last two dims of [C, H, W] (any dtype ddl images use).
class Pad {
 public:
  explicit Pad(int64_t padding, double fill = 0.0) : Pad(padding, padding, padding, padding, fill) {}
  Pad(int64_t left, int64_t top, int64_t right, int64_t bottom, double fill = 0.0);
  Tensor operator()(const Tensor& x, TransformContext&) const;

 private:
  int64_t left_, top_, right_, bottom_;
  double fill_;
};

// Pads by `padding` (constant `fill`), then cuts a random height x width window.
// Draws the top row, then the left column, as torchvision does.
class RandomCrop {
 public:
  RandomCrop(int64_t height, int64_t width, int64_t padding = 0, double fill = 0.0);
  Tensor operator()(const Tensor& x, TransformContext& ctx) const;

 private:
  int64_t height_, width_, padding_;
  double fill_;
};

// Mirrors the last dim with probability p (one uniform draw per call).
class RandomHorizontalFlip {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor operator()(const Tensor& x, TransformContext& ctx) const;

 private:
  double p_;
};

// Bilinear resize of [C, H, W] to [C, height, width] with align_corners = false
// and no antialiasing (torchvision's tensor Resize). uint8 results are rounded.
class Resize {
 public:
  Resize(int64_t height, int64_t width);
  Tensor operator()(const Tensor& x, TransformContext&) const;

 private:
  int64_t height_, width_;
};

// Applies transforms in order, all drawing from the same context.
class Compose {
 public:
  explicit Compose(std::vector<Transform> transforms) : transforms_(std::move(transforms)) {}
  Tensor operator()(const Tensor& x, TransformContext& ctx) const;

 private:
  std::vector<Transform> transforms_;
};

// A custom deterministic transform from a plain function. (A random one is any
// callable with the Transform signature: it takes the context.)
class Lambda {
 public:
  explicit Lambda(std::function<Tensor(const Tensor&)> fn) : fn_(std::move(fn)) {}
  Tensor operator()(const Tensor& x, TransformContext&) const { return fn_(x); }

 private:
  std::function<Tensor(const Tensor&)> fn_;
};

}  // namespace ddl::data
