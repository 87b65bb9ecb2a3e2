// CIFAR-10 and CIFAR-100, binary version. A CIFAR-10 record is 3,073 bytes (a
// label byte, then 1,024 red, 1,024 green, 1,024 blue bytes of a row-major
// 32x32 image); CIFAR-100 records carry a coarse and a fine label byte first.
// Images are held in memory as uint8 [N, 3, 32, 32] and handed out as views.
#pragma once

#include <string>
#include <vector>

#include <ddl/data/dataset.h>

namespace ddl::data {

class CIFAR10 : public Dataset {
 public:
  // Reads data_batch_1..5.bin (train) or test_batch.bin from `root` or
  // `root/cifar-10-batches-bin`. Throws ddl::Error naming the file and record
  // for a missing file, a size that is not whole records, or a label >= 10.
  explicit CIFAR10(const std::string& root, bool train = true, Transform transform = {});
  int64_t size() const override { return images_.size(0); }
  const Tensor& images() const { return images_; }  // uint8 [N, 3, 32, 32]
  const Tensor& labels() const { return labels_; }  // int64 [N]

 protected:
  Example load(int64_t index) const override;

 private:
  Tensor images_, labels_;
};

class CIFAR100 : public Dataset {
 public:
  enum class Label { Fine, Coarse };  // 100 fine classes or 20 superclasses
  // Reads train.bin or test.bin from `root` or `root/cifar-100-binary`.
  explicit CIFAR100(const std::string& root, bool train = true, Transform transform = {}, Label label = Label::Fine);
  int64_t size() const override { return images_.size(0); }
  const Tensor& images() const { return images_; }         // uint8 [N, 3, 32, 32]
  const Tensor& fine_labels() const { return fine_; }      // int64 [N], < 100
  const Tensor& coarse_labels() const { return coarse_; }  // int64 [N], < 20

 protected:
  Example load(int64_t index) const override;

 private:
  Tensor images_, fine_, coarse_;
  Label label_;
};

}  // namespace ddl::data
