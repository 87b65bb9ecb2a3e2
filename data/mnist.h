// MNIST and Fashion-MNIST from their IDX files, plain or gzip-compressed:
// root/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. Images are held in
// memory as uint8 and handed out as [1, 28, 28] views; targets are 0-dim int64.
// Downloading is not this class's job.
#pragma once

#include <string>

#include <ddl/data/dataset.h>

namespace ddl::data {

// An IDX image file (magic 2051, big-endian count, rows, cols) as uint8 [N, rows, cols].
Tensor read_idx_images(const std::string& path);
// An IDX label file (magic 2049, big-endian count) as int64 [N].
Tensor read_idx_labels(const std::string& path);

class MNIST : public Dataset {
 public:
  // Reads the train (60,000) or test (10,000) split from `root`. Throws
  // ddl::Error naming the file when a file is missing or malformed, or when the
  // image and label counts differ.
  explicit MNIST(const std::string& root, bool train = true, Transform transform = {});
  int64_t size() const override { return images_.size(0); }
  const Tensor& images() const { return images_; }  // uint8 [N, H, W]
  const Tensor& labels() const { return labels_; }  // int64 [N]

 protected:
  Example load(int64_t index) const override;

 private:
  Tensor images_, labels_;
};

// Fashion-MNIST uses the same files and layout.
using FashionMNIST = MNIST;

}  // namespace ddl::data
