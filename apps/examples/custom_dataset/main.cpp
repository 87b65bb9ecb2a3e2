// ddl's version of pytorch/examples' cpp/custom-dataset: a Dataset of one's own that
// reads images listed in a text file, one "relative/path.png label split" per line
// (split is train or test, the original's info.txt), decodes each with data::read_image,
// resizes it and scales it to [0, 1]; then a small convolutional network learns the
// labels with SGD and is tested on the test split. (The original resizes with OpenCV to
// 224 x 224 for an AlexNet; this one uses --image-size 32 and a smaller network.)
//   build/apps/examples/custom_dataset --root DIR --info DIR/info.txt --epochs 5
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

using Items = std::vector<std::pair<std::string, int64_t>>;  // (path, label)

// The examples of one split. load() is const and keeps no state, so loader threads may
// call it at once (data::Dataset's contract).
class CustomDataset : public data::Dataset {
 public:
  CustomDataset(std::string root, Items items, int64_t image_size)
      : root_(std::move(root)), items_(std::move(items)), resize_(image_size, image_size) {}
  int64_t size() const override { return static_cast<int64_t>(items_.size()); }

 protected:
  data::Example load(int64_t index) const override {
    const auto& [path, label] = items_[static_cast<size_t>(index)];
    data::TransformContext ctx(0, 0, index);  // Resize and ToTensor draw nothing from it
    const Tensor image = data::ToTensor()(resize_(data::read_image(root_ + "/" + path, 3), ctx), ctx);
    return {image, full({}, double(label), DType::Int64)};
  }

 private:
  std::string root_;
  Items items_;
  data::Resize resize_;
};

// Reads "path label split" lines into the train and test lists; an unknown split or a
// malformed line is an error naming the line.
std::pair<Items, Items> read_info(const std::string& info_path) {
  std::ifstream in(info_path);
  DDL_CHECK(in.is_open(), "custom_dataset: cannot open ", info_path);
  Items train, test;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string path, split;
    int64_t label = -1;
    DDL_CHECK(fields >> path >> label >> split && label >= 0 && (split == "train" || split == "test"),
              "custom_dataset: ", info_path, ":", n, ": expected 'path label train|test', got '", line, "'");
    (split == "train" ? train : test).emplace_back(path, label);
  }
  return {train, test};
}

// [N, 3, 32, 32] -> log-probabilities [N, classes]
std::shared_ptr<nn::Sequential> make_network(int64_t classes) {
  return std::make_shared<nn::Sequential>(nn::Conv2d(3, 16, 5), nn::ReLU(), nn::MaxPool2d(2),   // 32 -> 28 -> 14
                                          nn::Conv2d(16, 32, 5), nn::ReLU(), nn::MaxPool2d(2),  // 14 -> 10 -> 5
                                          nn::Flatten(), nn::Linear(32 * 5 * 5, 64), nn::ReLU(),
                                          nn::Linear(64, classes), nn::LogSoftmax(1));
}

// One pass over `loader`; trains when an optimizer is given. Returns (mean loss, accuracy).
std::pair<double, double> run_epoch(nn::Module& net, const data::DataLoader& loader, optim::Optimizer* optimizer) {
  net.train(optimizer != nullptr);
  GradModeGuard grad_mode(optimizer != nullptr);
  double loss_sum = 0, correct = 0;
  for (const data::Batch& batch : loader) {
    const Variable output = net.forward(Variable(batch.data));
    const Variable loss = nll_loss(output, batch.target);
    if (optimizer) optimizer->zero_grad(), loss.backward(), optimizer->step();
    loss_sum += loss.item() * double(batch.data.size(0));
    correct += sum(eq(output.argmax(1), batch.target).to(DType::Int64)).item();
  }
  const double n = double(loader.dataset().size());
  return {loss_sum / n, correct / n};
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"ddl's version of pytorch/examples cpp/custom-dataset"};
  std::string root = ".", info = "info.txt";
  int64_t image_size = 32, epochs = 10, batch_size = 8, test_batch_size = 200, classes = 0;
  app.add_option("--root", root, "folder the info file's paths are relative to");
  app.add_option("--info", info, "the list: one 'path label train|test' per line");
  app.add_option("--image-size", image_size, "images are resized to this square (the network expects 32)");
  app.add_option("--epochs", epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", batch_size, "training batch size")->check(CLI::PositiveNumber);
  app.add_option("--classes", classes, "number of labels (0: the largest label + 1)");
  CLI11_PARSE(app, argc, argv);

  manual_seed(1);
  const auto start = std::chrono::steady_clock::now();
  const auto [train_items, test_items] = read_info(info);
  DDL_CHECK(!train_items.empty() && !test_items.empty(), "custom_dataset: ", info, " lists no train or no test image");
  for (const auto& items : {train_items, test_items})
    for (const auto& item : items) classes = std::max(classes, item.second + 1);
  const auto train_set = std::make_shared<CustomDataset>(root, train_items, image_size);
  const auto test_set = std::make_shared<CustomDataset>(root, test_items, image_size);
  const auto train_opts = data::DataLoaderOptions(batch_size).shuffle(true);
  const auto test_opts = data::DataLoaderOptions(test_batch_size);
  const auto sgd_opts = optim::SGDOptions(0.01).momentum(0.9);
  data::DataLoader train_loader(train_set, train_opts), test_loader(test_set, test_opts);
  std::printf("%lld training and %lld test images, %lld classes\n", (long long)train_set->size(),
              (long long)test_set->size(), (long long)classes);

  auto net = make_network(classes);
  optim::SGD optimizer(net->parameters(), sgd_opts);
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    train_loader.set_epoch(epoch);
    const auto [train_loss, train_acc] = run_epoch(*net, train_loader, &optimizer);
    const auto [test_loss, test_acc] = run_epoch(*net, test_loader, nullptr);
    std::printf("Epoch %lld: train loss %.4f acc %.3f | test loss %.4f acc %.3f\n", (long long)epoch, train_loss,
                train_acc, test_loss, test_acc);
  }
  std::printf("time %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "custom_dataset: error: %s\n", e.what());
  return 1;
}
