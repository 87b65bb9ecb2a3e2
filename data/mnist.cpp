// IDX parsing: a 4-byte big-endian magic (0x00000803 images, 0x00000801
// labels), big-endian extents, then raw uint8 data in row-major order.
#include "data/mnist.h"

#include <algorithm>
#include <cstring>

#include "data/file_io.h"
#include "tensor/factory.h"

namespace ddl::data {
namespace {

constexpr uint32_t kImageMagic = 2051, kLabelMagic = 2049;

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

// Checks the header of an IDX file with `ndims` extents; returns the extents.
std::vector<int64_t> idx_header(const std::vector<uint8_t>& b, const std::string& path, uint32_t magic, int ndims,
                                const char* kind) {
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  DDL_CHECK(b.size() >= header, "MNIST: '", path, "' has ", b.size(), " bytes, too short for the ", header,
            "-byte header of an IDX ", kind, " file");
  const uint32_t got = detail::read_be32(b.data());
  DDL_CHECK(got == magic, "MNIST: '", path, "': bad magic number ", got, " at offset 0, expected ", magic,
            " for an IDX ", kind, " file");
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int d = 0; d < ndims; ++d) {
    dims.push_back(detail::read_be32(b.data() + 4 + 4 * d));
    count *= dims.back();
  }
  const size_t expected = header + static_cast<size_t>(count);
  if (b.size() != expected) {
    const int64_t per = count / std::max<int64_t>(dims[0], 1);
    const int64_t whole = per > 0 ? static_cast<int64_t>((b.size() - header) / per) : 0;
    DDL_CHECK(b.size() > expected, "MNIST: '", path, "' is truncated: header promises ", dims[0], " ", kind, "s (",
              expected, " bytes) but the file has ", b.size(), " bytes; record ", whole, " at offset ",
              header + whole * per, " is incomplete");
    DDL_CHECK(false, "MNIST: '", path, "' has ", b.size() - expected, " bytes after the ", dims[0], " ", kind,
              "s its header promises (expected ", expected, " bytes)");
  }
  return dims;
}

}  // namespace

Tensor read_idx_images(const std::string& path) {
  const std::vector<uint8_t> b = detail::read_file(path, "MNIST");
  const auto dims = idx_header(b, path, kImageMagic, 3, "image");
  Tensor out = empty({dims[0], dims[1], dims[2]}, DType::UInt8);
  if (out.numel() > 0) std::memcpy(out.data<uint8_t>(), b.data() + 16, static_cast<size_t>(out.numel()));
  return out;
}

Tensor read_idx_labels(const std::string& path) {
  const std::vector<uint8_t> b = detail::read_file(path, "MNIST");
  const auto dims = idx_header(b, path, kLabelMagic, 1, "label");
  Tensor out = empty({dims[0]}, DType::Int64);
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < dims[0]; ++i) o[i] = b[8 + i];
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
}

Example MNIST::load(int64_t index) const {
  return {images_.select(0, index).unsqueeze(0),
          scalar_tensor(static_cast<double>(labels_.data<int64_t>()[index]), DType::Int64)};
}

}  // namespace ddl::data
