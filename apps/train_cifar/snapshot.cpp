// Snapshot files: one safetensors file holding the model's tensors under their
// own names, the optimizer's under "optimizer.", and the position as metadata,
// written atomically (temporary file, fsync, rename) by save_safetensors.
#include "apps/train_cifar/snapshot.h"

#include <filesystem>

#include "nn/checkpoint.h"
#include "nn/safetensors.h"
#include "tensor/random.h"
#include "trace/trace.h"

namespace ddl::apps {

namespace {
const std::string kOpt = "optimizer.";
}

void save_snapshot(const std::string& path, const nn::Module& model, const optim::Optimizer& opt,
                   const TrainingPosition& pos) {
  DDL_TRACE_SPAN("save snapshot", "snapshot");
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, v] : model.named_state()) tensors.emplace_back(name, v.data());
  for (const auto& [name, t] : opt.state_tensors()) tensors.emplace_back(kOpt + name, t);
  std::map<std::string, std::string> meta = {{"epoch", std::to_string(pos.epoch)},
                                             {"step_in_epoch", std::to_string(pos.step_in_epoch)},
                                             {"global_step", std::to_string(pos.global_step)},
                                             {"seed", std::to_string(pos.seed)},
                                             {"world_size", std::to_string(pos.world_size)},
                                             {"rng_offset", std::to_string(pos.rng_offset)}};
  // What the file holds no state for, and how a resume rebuilds it, for a reader of the file.
  meta["scheduler"] = "rebuilt from global_step (the schedule is a function of the step)";
  meta["sampler"] =
      "rebuilt from seed, epoch and step_in_epoch (shuffle seeded by seed + epoch; that epoch's first "
      "step_in_epoch batches are skipped)";
  meta["rng"] = "default generator restored to rng_offset; augmentation is seeded per sample by (seed, epoch, index)";
  for (const auto& [k, v] : opt.state_metadata()) meta[kOpt + k] = v;
  nn::save_safetensors(path, tensors, meta);
}

bool load_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt, TrainingPosition& pos) {
  if (!std::filesystem::exists(path)) return false;
  DDL_TRACE_SPAN("load snapshot", "snapshot");
  const nn::TensorFile file = nn::load_safetensors(path);
  auto get = [&](const char* key) {
    auto it = file.metadata.find(key);
    DDL_CHECK(it != file.metadata.end(), "snapshot ", path, " lacks '", key, "' in its metadata");
    return it->second;
  };
  TrainingPosition saved;
  saved.epoch = std::stoll(get("epoch"));
  saved.step_in_epoch = std::stoll(get("step_in_epoch"));
  saved.global_step = std::stoll(get("global_step"));
  saved.seed = std::stoull(get("seed"));
  saved.world_size = std::stoll(get("world_size"));
  saved.rng_offset = std::stoull(get("rng_offset"));
  DDL_CHECK(saved.seed == pos.seed && saved.world_size == pos.world_size, "snapshot ", path, " was taken with seed ",
            saved.seed, " and world size ", saved.world_size, "; this run has seed ", pos.seed, " and world size ",
            pos.world_size, ". Delete it or match the settings");
  nn::load_state(model, path, /*strict=*/false);  // the optimizer's tensors are the only extras
  std::vector<std::pair<std::string, Tensor>> opt_tensors;
  std::map<std::string, std::string> opt_meta;
  // The optimizer's state lives beside the parameters (on the GPU with --device cuda).
  const auto params = model.parameters();
  const Device device = params.empty() ? Device::cpu() : params.front().device();
  for (const auto& [name, t] : file.tensors)
    if (name.rfind(kOpt, 0) == 0) opt_tensors.emplace_back(name.substr(kOpt.size()), t.to(device));
  for (const auto& [k, v] : file.metadata)
    if (k.rfind(kOpt, 0) == 0) opt_meta[k.substr(kOpt.size())] = v;
  opt.load_state(opt_tensors, opt_meta);
  default_generator().set_offset(saved.rng_offset);
  pos = saved;
  return true;
}

}  // namespace ddl::apps
