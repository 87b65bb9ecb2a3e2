// One training step of a model on random data: forward, cross-entropy,
// backward, SGD with momentum and weight decay; or forward only (--eval).
// Prints one JSON line with the median ms per step and the peak RSS.
// --device cuda[:N] runs it on a GPU (each step timed to the end of its GPU work);
// --autocast bf16 runs forward and loss under autocast::Guard(BFloat16), float32
// master weights and optimizer (as torch.autocast; fp16 would also need a loss scaler);
// --tf32 lets float32 convolutions and GEMMs use TF32 tensor cores (off, as in ddl's default).
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "bench/bench_util.h"
#include <ddl/ddl.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/tensor/cpu/cpu_level.h>

int train_step_main(int argc, char** argv) {
  std::string model_name = "vgg11_bn";
  int64_t batch = 64, steps = 10, in_channels = 3, image = 32;
  bool eval = false, tf32 = false;
  std::string trace_file, precision = "fp32";
  ddl::Device device = ddl::Device::cpu();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--model")
      model_name = next();
    else if (a == "--batch")
      batch = std::stoll(next());
    else if (a == "--steps")
      steps = std::stoll(next());
    else if (a == "--eval")
      eval = true;
    else if (a == "--device")
      device = ddl::Device::parse(next());
    else if (a == "--autocast")
      precision = next();
    else if (a == "--tf32")
      tf32 = true;
    else if (a == "--trace")
      trace_file = next();
    else if (a == "--threads" || a == "--clock")
      next();
    else {
      std::fprintf(stderr, "train-step: unknown flag %s\n", a.c_str());
      return 1;
    }
  }
  if (precision != "fp32" && precision != "bf16") {
    std::fprintf(stderr, "train-step: --autocast takes bf16 (fp32 is the default), got '%s'\n", precision.c_str());
    return 1;
  }
  const int threads = ddl::bench::threads_arg(argc, argv, ddl::get_num_threads());
  ddl::set_num_threads(threads);
  ddl::cuda::set_allow_tf32(tf32);
  ddl::manual_seed(0);
  auto model = ddl::nn::make_model(model_name, 10, in_channels, image);
  model->to(device);
  ddl::optim::SGD opt(model->parameters(), ddl::optim::SGDOptions(0.01).momentum(0.9).weight_decay(5e-4));
  ddl::Generator gen(1);
  const ddl::Tensor x = ddl::randn({batch, in_channels, image, image}, gen).to(device);
  const ddl::Tensor y = ddl::randint(0, 10, {batch}, gen).to(device);
  // GPU work is asynchronous: each timed step ends when the device is done.
  auto sync = [&] {
    if (device.is_cuda()) ddl::cuda::synchronize(device.index);
  };
  if (eval) model->eval();
  std::optional<ddl::autocast::Guard> autocast;
  if (precision == "bf16") autocast.emplace(ddl::DType::BFloat16);
  if (!trace_file.empty()) ddl::dist::start_trace(trace_file);
  const double secs = ddl::bench::median_seconds(static_cast<int>(steps), [&] {
    if (eval) {
      ddl::NoGradGuard no_grad;
      (*model)(ddl::Variable(x));
      sync();
      return;
    }
    ddl::Variable loss = ddl::cross_entropy((*model)(ddl::Variable(x)), y);  // float32 under autocast
    opt.zero_grad();
    loss.backward();
    opt.step();
    sync();
  });
  if (!trace_file.empty()) ddl::dist::write_trace(trace_file);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "{\"bench\":\"%s\",\"framework\":\"ddl\",\"model\":\"%s\",\"device\":\"%s\",\"precision\":\"%s\",\"batch\":%ld,"
      "\"threads\":%d,\"cpu_level\":\"%s\",\"tf32\":%s,"
      "\"ms_per_step\":%.1f,\"images_per_s\":%.1f,\"peak_rss_mb\":%.0f}\n",
      eval ? "forward" : "train-step", model_name.c_str(), device.str().c_str(), precision.c_str(),
      static_cast<long>(batch), threads, ddl::cpu::cpu_level_name(ddl::cpu::cpu_level()), tf32 ? "true" : "false",
      secs * 1e3, static_cast<double>(batch) / secs, static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
