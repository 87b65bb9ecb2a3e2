// Dataset construction for train_cifar.
#include "apps/train_cifar/datasets.h"

#include <algorithm>

namespace ddl::apps {

namespace {

using data::Transform;

const std::vector<std::string> kFashionNames = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
const std::vector<std::string> kCifarNames = {"airplane", "automobile", "bird",  "cat",  "deer",
                                              "dog",      "frog",       "horse", "ship", "truck"};

Transform compose(std::vector<Transform> ts) { return data::Compose(std::move(ts)); }

// 28x28 digits/clothes: pad 2 zero pixels each side (raw value 0) to 32x32, scale, normalise.
Transform mnist_transform(bool augment, double mean, double std) {
  std::vector<Transform> ts = {data::ToTensor(), data::Pad(2)};
  if (augment) ts.push_back(data::RandomCrop(32, 32, 2)), ts.push_back(data::RandomHorizontalFlip());
  ts.push_back(data::Normalize({mean}, {std}));
  return compose(std::move(ts));
}

Transform cifar_transform(bool augment) {
  std::vector<Transform> ts = {data::ToTensor()};
  if (augment) ts.push_back(data::RandomCrop(32, 32, 4)), ts.push_back(data::RandomHorizontalFlip());
  ts.push_back(data::Normalize({0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616}));
  return compose(std::move(ts));
}

int64_t limit(int64_t n, int64_t wanted) { return wanted > 0 ? std::min(n, wanted) : n; }

// Examples [offset, offset + n) of another dataset (its transform applies).
class Slice : public data::Dataset {
 public:
  Slice(std::shared_ptr<const data::Dataset> base, int64_t offset, int64_t n)
      : base_(std::move(base)), offset_(offset), n_(n) {}
  int64_t size() const override { return n_; }

 protected:
  data::Example load(int64_t index) const override { return base_->get(offset_ + index); }

 private:
  std::shared_ptr<const data::Dataset> base_;
  int64_t offset_, n_;
};

}  // namespace

std::string data_dir_problem(const TrainOptions& o) {
  if (!o.data.empty()) return "";
  // No MNIST package exists here: falling back to the Fashion-MNIST folder would train on
  // the wrong dataset without a word.
  if (o.dataset == "mnist")
    return std::string(
               "--dataset mnist needs --data DIR, the folder holding MNIST's {train,t10k}-{images-idx3,"
               "labels-idx1}-ubyte[.gz] (only Fashion-MNIST is packaged here, at ") +
           kFashionMnistDir + ")";
  if (o.dataset == "cifar10")
    return "--dataset cifar10 needs --data DIR, the folder holding data_batch_1.bin ... test_batch.bin of the "
           "CIFAR-10 binary version";
  if (o.dataset == "folder") return "--dataset folder needs --data DIR with train/<class>/*.png and test/<class>/*.png";
  return "";
}

DataSplits make_datasets(const TrainOptions& o) {
  const std::string problem = data_dir_problem(o);
  DDL_CHECK(problem.empty(), problem);
  DataSplits s;
  if (o.dataset == "fashion-mnist" || o.dataset == "mnist") {
    const std::string root = !o.data.empty() ? o.data : kFashionMnistDir;
    const bool fashion = o.dataset == "fashion-mnist";
    const double mean = fashion ? 0.2860 : 0.1307, std = fashion ? 0.3530 : 0.3081;
    s.train = std::make_shared<data::MNIST>(root, true, mnist_transform(o.augment, mean, std));
    s.test = std::make_shared<data::MNIST>(root, false, mnist_transform(false, mean, std));
    s.in_channels = 1;
    s.class_names = fashion ? kFashionNames : std::vector<std::string>{};
  } else if (o.dataset == "cifar10") {
    s.train = std::make_shared<data::CIFAR10>(o.data, true, cifar_transform(o.augment));
    s.test = std::make_shared<data::CIFAR10>(o.data, false, cifar_transform(false));
    s.class_names = kCifarNames;
  } else if (o.dataset == "folder") {
    data::ImageFolderOptions fo;
    fo.resize_height = fo.resize_width = 32;
    const auto train = std::make_shared<data::ImageFolder>(o.data + "/train", cifar_transform(o.augment), fo);
    s.train = train;
    fo.classes = train->classes();  // test/ numbers its classes as train/ does, by name
    s.test = std::make_shared<data::ImageFolder>(o.data + "/test", cifar_transform(false), fo);
    s.class_names = train->classes();
    s.num_classes = static_cast<int64_t>(train->classes().size());
  } else {  // synthetic: learnable class patterns plus noise, generated from the seed
    const int64_t n_train = o.train_samples > 0 ? o.train_samples : 2048,
                  n_test = o.test_samples > 0 ? o.test_samples : 512;
    const Transform t = compose({data::ToTensor(), data::Normalize({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25})});
    // One generator of class patterns; the test split is later examples of the same classes.
    const auto all = std::make_shared<data::SyntheticDataset>(n_train + n_test, Shape{3, 32, 32}, 10, o.seed, t);
    s.train = std::make_shared<Slice>(all, 0, n_train);
    s.test = std::make_shared<Slice>(all, n_train, n_test);
  }
  s.train_size = limit(s.train->size(), o.train_samples);
  s.test_size = limit(s.test->size(), o.test_samples);
  return s;
}

}  // namespace ddl::apps
