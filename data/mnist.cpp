// IDX parsing: a 4-byte big-endian magic (0x00000803 images, 0x00000801
// labels), big-endian extents, then raw uint8 data in row-major order.
#include <algorithm>
#include <cstring>

#include <ddl/data/file_io.h>
#include <ddl/data/mnist.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::data {
namespace {

constexpr uint32_t kImageMagic = 2051, kLabelMagic = 2049;
constexpr int64_t kNumClasses = 10;
constexpr uint64_t kMaxImagePixels = uint64_t{1} << 31;

// Picks `root/name` or `root/name.gz`, whichever exists (the plain one first).
std::string find_idx(const std::string& root, const std::string& name) {
  const std::string plain = root + "/" + name;
  if (detail::file_exists(plain)) return plain;
  const std::string gz = plain + ".gz";
  DDL_CHECK(detail::file_exists(gz), "MNIST: cannot find '", plain, "' or '", gz,
            "' (expected the IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
            "t10k-labels-idx1-ubyte, optionally gzipped)");
  return gz;
}

// Checks the header of an IDX file with `ndims` extents; returns the extents. Sizes are
// computed with overflow checks and compared with the bytes present before anything is
// allocated: a header's extents are 32-bit and their product can pass 64 bits.
std::vector<int64_t> idx_header(const std::vector<uint8_t>& b, const std::string& path, uint32_t magic, int ndims,
                                const char* kind) {
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  DDL_CHECK(b.size() >= header, "MNIST: '", path, "' has ", b.size(), " bytes, too short for the ", header,
            "-byte header of an IDX ", kind, " file");
  const uint32_t got = detail::read_be32(b.data());
  DDL_CHECK(got == magic, "MNIST: '", path, "': bad magic number ", got, " at offset 0, expected ", magic,
            " for an IDX ", kind, " file");
  std::vector<int64_t> dims;
  uint64_t count = 1, per = 1;  // elements in all, and per record
  bool overflow = false;
  for (int d = 0; d < ndims; ++d) {
    dims.push_back(detail::read_be32(b.data() + 4 + 4 * d));
    overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(dims.back()), &count);
    if (d > 0) per *= static_cast<uint64_t>(dims.back());  // < 2^64: at most two 32-bit factors
  }
  const uint64_t present = b.size() - header;
  if (overflow || count != present) {
    DDL_CHECK(overflow || count > present, "MNIST: '", path, "' has ", present - count, " bytes after the ", dims[0],
              " ", kind, "s its header promises (expected ", header + count, " bytes)");
    const uint64_t whole = per > 0 ? present / per : 0;
    std::string shape = std::to_string(dims[0]);
    for (int d = 1; d < ndims; ++d) shape += "x" + std::to_string(dims[static_cast<size_t>(d)]);
    DDL_CHECK(false, "MNIST: '", path, "' is truncated: its header promises ", kind, "s of shape ", shape, " (",
              overflow ? std::string("more than 2^64") : std::to_string(header + count), " bytes) but the file has ",
              b.size(), " bytes; record ", whole, " at offset ", header + whole * per, " is incomplete");
  }
  return dims;
}

// The file's bytes, read no further than its header's promise (plus slack, so trailing
// bytes get idx_header's precise message) and the DDL_DATA_MAX_BYTES cap.
std::vector<uint8_t> read_idx(const std::string& path, int ndims) {
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  const std::vector<uint8_t> head = detail::read_head(path, "MNIST", header);
  constexpr uint64_t kSlack = uint64_t{1} << 20;
  uint64_t count = 1, promised = 0;
  bool unknown = head.size() < header;  // too short: idx_header says so after a capped read
  for (int d = 0; d < ndims && !unknown; ++d)
    unknown = __builtin_mul_overflow(count, uint64_t{detail::read_be32(head.data() + 4 + 4 * d)}, &count);
  unknown = unknown || __builtin_add_overflow(count, header + kSlack, &promised);
  const uint64_t limit = unknown ? detail::max_file_bytes() : std::min(detail::max_file_bytes(), promised);
  return detail::read_file(path, "MNIST", limit);
}

}  // namespace

Tensor read_idx_images(const std::string& path) {
  const std::vector<uint8_t> b = read_idx(path, 3);
  const auto dims = idx_header(b, path, kImageMagic, 3, "image");
  DDL_CHECK(dims[1] > 0 && dims[2] > 0, "MNIST: '", path, "' holds images of ", dims[1], "x", dims[2],
            " pixels; a model needs images with at least one row and one column");
  // With 0 images the size check passes whatever rows x cols claims; the tensor's strides
  // must still fit in 64 bits (found by tests/fuzz/fuzz_idx).
  DDL_CHECK(static_cast<uint64_t>(dims[1]) * static_cast<uint64_t>(dims[2]) <= kMaxImagePixels, "MNIST: '", path,
            "' holds images of ", dims[1], "x", dims[2], " pixels, more than the ", kMaxImagePixels,
            " an IDX image may have here; a corrupt header?");
  Tensor out = empty({dims[0], dims[1], dims[2]}, DType::UInt8);
  if (out.numel() > 0) std::memcpy(out.data<uint8_t>(), b.data() + 16, static_cast<size_t>(out.numel()));
  return out;
}

Tensor read_idx_labels(const std::string& path) {
  const std::vector<uint8_t> b = read_idx(path, 1);
  const auto dims = idx_header(b, path, kLabelMagic, 1, "label");
  Tensor out = empty({dims[0]}, DType::Int64);
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < dims[0]; ++i) o[i] = b[8 + static_cast<size_t>(i)];
  return out;
}

MNIST::MNIST(const std::string& root, bool train, Transform transform) : Dataset(std::move(transform)) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string image_path = find_idx(root, prefix + "-images-idx3-ubyte");
  const std::string label_path = find_idx(root, prefix + "-labels-idx1-ubyte");
  images_ = read_idx_images(image_path);
  labels_ = read_idx_labels(label_path);
  DDL_CHECK(images_.size(0) == labels_.size(0), "MNIST: '", image_path, "' holds ", images_.size(0), " images but '",
            label_path, "' holds ", labels_.size(0), " labels");
  // MNIST, Fashion-MNIST and KMNIST have ten classes: a label outside is a corrupt file,
  // caught here rather than as an out-of-range target in the loss.
  const int64_t* label = labels_.data<int64_t>();
  for (int64_t i = 0; i < labels_.size(0); ++i)
    DDL_CHECK(label[i] < kNumClasses, "MNIST: '", label_path, "': label record ", i, " at offset ", 8 + i, " is ",
              label[i], ", expected a class below ", kNumClasses);
}

Example MNIST::load(int64_t index) const {
  return {images_.select(0, index).unsqueeze(0),
          scalar_tensor(static_cast<double>(labels_.data<int64_t>()[index]), DType::Int64)};
}

}  // namespace ddl::data
