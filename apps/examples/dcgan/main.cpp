// ddl's version of pytorch/examples' cpp/dcgan: a deep convolutional GAN (Radford et al.,
// "Unsupervised Representation Learning with Deep Convolutional Generative Adversarial
// Networks", 2015) on Fashion-MNIST, with the original's layers, Adam (lr 2e-4, betas 0.5)
// and smoothed real labels. --width scales every layer's channels (the original: 64) and
// --iterations bounds the run, so a test trains a small one in seconds. Every
// --checkpoint-every iterations, and at the end, it saves both models and optimizers
// (safetensors) and a grid of samples as a PGM image; --restore resumes from them.
//   build/apps/examples/dcgan --iterations 200 --width 16 --out /tmp/dcgan
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

constexpr int64_t kNoiseSize = 100;

// noise [N, kNoiseSize, 1, 1] -> images [N, 1, 28, 28] in [-1, 1]: 1 -> 4 -> 7 -> 14 -> 28.
struct DCGANGenerator : nn::Module {
  explicit DCGANGenerator(int64_t w) : Module("DCGANGenerator") {
    auto up = [](int64_t in, int64_t out, int64_t k) {
      return nn::ConvTranspose2dOptions(in, out, k).stride(2).padding(1).bias(false);
    };
    conv1 = register_module(
        "conv1", std::make_shared<nn::ConvTranspose2d>(nn::ConvTranspose2dOptions(kNoiseSize, 4 * w, 4).bias(false)));
    conv2 = register_module("conv2", std::make_shared<nn::ConvTranspose2d>(up(4 * w, 2 * w, 3)));
    conv3 = register_module("conv3", std::make_shared<nn::ConvTranspose2d>(up(2 * w, w, 4)));
    conv4 = register_module("conv4", std::make_shared<nn::ConvTranspose2d>(up(w, 1, 4)));
    bn1 = register_module("batch_norm1", std::make_shared<nn::BatchNorm2d>(4 * w));
    bn2 = register_module("batch_norm2", std::make_shared<nn::BatchNorm2d>(2 * w));
    bn3 = register_module("batch_norm3", std::make_shared<nn::BatchNorm2d>(w));
  }
  Variable forward(const Variable& noise) override {
    Variable x = relu(bn1->forward(conv1->forward(noise)));
    x = relu(bn2->forward(conv2->forward(x)));
    x = relu(bn3->forward(conv3->forward(x)));
    return tanh(conv4->forward(x));
  }
  std::shared_ptr<nn::ConvTranspose2d> conv1, conv2, conv3, conv4;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2, bn3;
};

// images [N, 1, 28, 28] -> probability of "real" [N, 1, 1, 1]: 28 -> 14 -> 7 -> 3 -> 1.
std::shared_ptr<nn::Sequential> make_discriminator(int64_t w) {
  auto down = [](int64_t in, int64_t out) {
    return nn::Conv2d(nn::Conv2dOptions(in, out, 4).stride(2).padding(1).bias(false));
  };
  return std::make_shared<nn::Sequential>(down(1, w), nn::LeakyReLU(0.2),                                  // layer 1
                                          down(w, 2 * w), nn::BatchNorm2d(2 * w), nn::LeakyReLU(0.2),      // layer 2
                                          down(2 * w, 4 * w), nn::BatchNorm2d(4 * w), nn::LeakyReLU(0.2),  // layer 3
                                          nn::Conv2d(nn::Conv2dOptions(4 * w, 1, 3).bias(false)),
                                          nn::Sigmoid());  // layer 4
}

// Writes images [N, 1, H, W] in [0, 1] side by side as one binary PGM (netpbm's P5).
void write_pgm(const Tensor& images, const std::string& path) {
  const int64_t n = images.size(0), h = images.size(2), w = images.size(3);
  const Tensor grid = clamp(images.view({n, h, w}).permute({1, 0, 2}).reshape({h, n * w}) * 255.0 + 0.5, 0.0, 255.0);
  const std::vector<uint8_t> bytes = to_vector<uint8_t>(grid.to(DType::UInt8).contiguous());
  std::ofstream out(path, std::ios::binary);
  out << "P5\n" << n * w << " " << h << "\n255\n";
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  DDL_CHECK(out.good(), "dcgan: could not write ", path);
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"ddl's version of pytorch/examples cpp/dcgan (on Fashion-MNIST)"};
  std::string root = "/usr/share/datasets/fashion-mnist", out_dir = ".";
  int64_t epochs = 30, iterations = 0, batch_size = 64, width = 64, checkpoint_every = 200, samples = 10;
  int64_t log_interval = 10;
  bool restore = false;
  app.add_option("--data", root, "folder with the IDX files (plain or .gz)");
  app.add_option("--epochs", epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--iterations", iterations, "stop after this many batches in all (0: no limit)");
  app.add_option("--batch-size", batch_size, "images per batch")->check(CLI::PositiveNumber);
  app.add_option("--width", width, "channels of the widest-resolution layer (the original: 64)")
      ->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-every", checkpoint_every, "batches between checkpoints")->check(CLI::PositiveNumber);
  app.add_option("--samples", samples, "images in each sample grid")->check(CLI::PositiveNumber);
  app.add_option("--log-interval", log_interval, "batches between loss lines")->check(CLI::PositiveNumber);
  app.add_option("--out", out_dir, "folder for checkpoints and sample images");
  app.add_flag("--restore", restore, "start from the checkpoints in --out");
  CLI11_PARSE(app, argc, argv);
  std::filesystem::create_directories(out_dir);

  manual_seed(1);
  const auto start = std::chrono::steady_clock::now();
  auto generator = std::make_shared<DCGANGenerator>(width);
  auto discriminator = make_discriminator(width);
  const auto dataset =
      std::make_shared<data::MNIST>(root, true, data::Compose({data::ToTensor(), data::Normalize({0.5}, {0.5})}));
  const auto loader_opts = data::DataLoaderOptions(batch_size).shuffle(true).drop_last(true);
  const auto adam_opts = optim::AdamOptions(2e-4).betas({0.5, 0.5});
  data::DataLoader loader(dataset, loader_opts);
  optim::Adam g_optimizer(generator->parameters(), adam_opts), d_optimizer(discriminator->parameters(), adam_opts);
  const std::string g_path = out_dir + "/generator-checkpoint.safetensors",
                    d_path = out_dir + "/discriminator-checkpoint.safetensors";
  if (restore) {
    nn::load_state(*generator, g_path), nn::load_state(*discriminator, d_path);
    optim::load_optimizer(g_optimizer, out_dir + "/generator-optimizer-checkpoint.safetensors");
    optim::load_optimizer(d_optimizer, out_dir + "/discriminator-optimizer-checkpoint.safetensors");
    std::printf("restored from %s\n", out_dir.c_str());
  }
  int64_t checkpoint = 1, done = 0;
  auto save_checkpoint = [&] {
    nn::save_state(*generator, g_path), nn::save_state(*discriminator, d_path);
    optim::save_optimizer(g_optimizer, out_dir + "/generator-optimizer-checkpoint.safetensors");
    optim::save_optimizer(d_optimizer, out_dir + "/discriminator-optimizer-checkpoint.safetensors");
    NoGradGuard no_grad;
    generator->eval();
    const Tensor images = generator->forward(Variable(randn({samples, kNoiseSize, 1, 1}))).data();
    generator->train();
    const std::string path = out_dir + "/dcgan-sample-" + std::to_string(checkpoint) + ".pgm";
    write_pgm((images + 1.0) / 2.0, path);
    std::printf("-> checkpoint %lld: %s\n", (long long)checkpoint++, path.c_str());
  };

  const int64_t batches = loader.size();
  for (int64_t epoch = 1; epoch <= epochs && (iterations == 0 || done < iterations); ++epoch) {
    loader.set_epoch(epoch);
    int64_t batch_index = 0;
    for (const data::Batch& batch : loader) {
      if (iterations > 0 && done >= iterations) break;
      const int64_t n = batch.data.size(0);
      // The discriminator: real images against labels in [0.8, 1) (label smoothing), then fakes against 0.
      discriminator->zero_grad();
      const Tensor real_labels = rand({n}) * 0.2 + 0.8;
      const Variable d_real = discriminator->forward(Variable(batch.data)).reshape({n});
      const Variable d_loss_real = binary_cross_entropy(d_real, Variable(real_labels));
      d_loss_real.backward();
      const Variable fake_images = generator->forward(Variable(randn({n, kNoiseSize, 1, 1})));
      const Variable d_fake = discriminator->forward(fake_images.detach()).reshape({n});
      const Variable d_loss_fake = binary_cross_entropy(d_fake, Variable(zeros({n})));
      d_loss_fake.backward();
      d_optimizer.step();
      const double d_loss = d_loss_real.item() + d_loss_fake.item();

      // The generator: make the discriminator call its fakes real.
      generator->zero_grad();
      const Variable g_loss =
          binary_cross_entropy(discriminator->forward(fake_images).reshape({n}), Variable(ones({n})));
      g_loss.backward();
      g_optimizer.step();
      ++batch_index, ++done;
      if (batch_index % log_interval == 0)
        std::printf("[%2lld/%2lld][%3lld/%3lld] D_loss: %.4f | G_loss: %.4f | D(x): %.3f | D(G(z)): %.3f\n",
                    (long long)epoch, (long long)epochs, (long long)batch_index, (long long)batches, d_loss,
                    g_loss.item(), d_real.mean().item(), d_fake.mean().item());
      if (batch_index % checkpoint_every == 0) save_checkpoint();
    }
  }
  if (done == 0 || done % checkpoint_every != 0) save_checkpoint();  // unless the last batch just saved one
  std::printf("Training complete: %lld batches, time %.2f s\n", (long long)done,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "dcgan: error: %s\n", e.what());
  return 1;
}
