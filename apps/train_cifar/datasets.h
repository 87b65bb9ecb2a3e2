// The datasets train_cifar knows, with the preprocessing each needs:
// Fashion-MNIST/MNIST padded 28x28 -> 32x32 and normalised (the fixed recipe of
// bench/RESULTS.md, "Real data"); CIFAR-10 normalised per channel, with crop+flip when augmenting.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/train_cifar/options.h"
#include <ddl/data/data.h>

namespace ddl::apps {

struct DataSplits {
  std::shared_ptr<const data::Dataset> train, test;
  int64_t train_size = 0, test_size = 0;  // after --train-samples / --test-samples
  int64_t num_classes = 10, in_channels = 3;
  std::vector<std::string> class_names;
};

// Throws ddl::Error (the data_dir_problem message) when a dataset needs --data and has none.
DataSplits make_datasets(const TrainOptions& opts);

// Empty when the dataset has its data: synthetic, fashion-mnist (Debian's package is the
// default), or --data given. Otherwise what to pass, e.g. "--dataset mnist needs --data DIR ...".
std::string data_dir_problem(const TrainOptions& opts);

// Where Debian's fashion-mnist package puts the dataset (the --dataset fashion-mnist default).
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace ddl::apps
