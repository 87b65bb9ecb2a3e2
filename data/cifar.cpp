// CIFAR binary readers: every file must be a whole number of fixed-size records.
#include <cstring>

#include <ddl/data/cifar.h>
#include <ddl/data/file_io.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::data {
namespace {

constexpr int64_t kImageBytes = 3 * 32 * 32;

// `dir` or `dir/sub`, whichever holds `probe`.
std::string find_dir(const std::string& root, const std::string& sub, const std::string& probe) {
  if (detail::file_exists(root + "/" + probe)) return root;
  if (detail::file_exists(root + "/" + sub + "/" + probe)) return root + "/" + sub;
  return root;  // read_file names the missing file
}

// Reads whole records of `label_bytes` label bytes plus one image from `paths`
// into images [N, 3, 32, 32] and labels[l] [N]; checks labels against `limits`.
void read_records(const char* format, const std::vector<std::string>& paths, int64_t label_bytes,
                  const std::vector<int64_t>& limits, Tensor& images, std::vector<Tensor>& labels) {
  const int64_t record = label_bytes + kImageBytes;
  std::vector<std::vector<uint8_t>> files;
  int64_t total = 0;
  for (const std::string& path : paths) {
    files.push_back(detail::read_file(path, format));
    const int64_t n = static_cast<int64_t>(files.back().size());
    DDL_CHECK(n > 0, format, ": '", path, "' is empty, expected records of ", record, " bytes");
    DDL_CHECK(n % record == 0, format, ": '", path, "' has ", n, " bytes, not a whole number of ", record,
              "-byte records: record ", n / record, " at offset ", n / record * record, " is truncated (", n % record,
              " of ", record, " bytes)");
    total += n / record;
  }
  images = empty({total, 3, 32, 32}, DType::UInt8);
  labels.assign(static_cast<size_t>(label_bytes), Tensor());
  for (auto& l : labels) l = empty({total}, DType::Int64);
  uint8_t* img = images.data<uint8_t>();
  int64_t row = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const uint8_t* b = files[f].data();
    const int64_t n = static_cast<int64_t>(files[f].size()) / record;
    for (int64_t r = 0; r < n; ++r, ++row) {
      const uint8_t* rec = b + r * record;
      for (int64_t l = 0; l < label_bytes; ++l) {
        DDL_CHECK(rec[l] < limits[static_cast<size_t>(l)], format, ": '", paths[f], "': record ", r, " at offset ",
                  r * record, " has label ", int{rec[l]}, ", expected a value below ", limits[static_cast<size_t>(l)]);
        labels[static_cast<size_t>(l)].data<int64_t>()[row] = rec[l];
      }
      std::memcpy(img + row * kImageBytes, rec + label_bytes, kImageBytes);
    }
  }
}

Tensor label_at(const Tensor& labels, int64_t index) {
  return scalar_tensor(static_cast<double>(labels.data<int64_t>()[index]), DType::Int64);
}

}  // namespace

CIFAR10::CIFAR10(const std::string& root, bool train, Transform transform) : Dataset(std::move(transform)) {
  const std::string dir = find_dir(root, "cifar-10-batches-bin", train ? "data_batch_1.bin" : "test_batch.bin");
  std::vector<std::string> paths;
  if (train)
    for (int i = 1; i <= 5; ++i) paths.push_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
  else
    paths.push_back(dir + "/test_batch.bin");
  std::vector<Tensor> labels;
  read_records("CIFAR-10", paths, 1, {10}, images_, labels);
  labels_ = labels[0];
}

Example CIFAR10::load(int64_t index) const { return {images_.select(0, index), label_at(labels_, index)}; }

CIFAR100::CIFAR100(const std::string& root, bool train, Transform transform, Label label)
    : Dataset(std::move(transform)), label_(label) {
  const std::string file = train ? "train.bin" : "test.bin";
  const std::string dir = find_dir(root, "cifar-100-binary", file);
  std::vector<Tensor> labels;
  read_records("CIFAR-100", {dir + "/" + file}, 2, {20, 100}, images_, labels);
  coarse_ = labels[0];
  fine_ = labels[1];
}

Example CIFAR100::load(int64_t index) const {
  return {images_.select(0, index), label_at(label_ == Label::Fine ? fine_ : coarse_, index)};
}

}  // namespace ddl::data
