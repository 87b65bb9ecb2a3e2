// Snapshot files: one safetensors file holding the model's tensors under their
// own names, the optimizer's under "optimizer.", and the position as metadata,
// written atomically (temporary file, fsync, rename) by save_safetensors.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <ddl/ft/snapshot.h>
#include <ddl/nn/checkpoint.h>
#include <ddl/nn/safetensors.h>
#include <ddl/tensor/core/random.h>
#include <ddl/trace/trace.h>

namespace ddl::ft {

namespace {
const std::string kOpt = "optimizer.";

// The metadata value of `key`, parsed whole as a decimal integer in [lo, hi].
int64_t integer_field(const std::map<std::string, std::string>& meta, const std::string& path, const char* key,
                      int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) {
  auto it = meta.find(key);
  DDL_CHECK(it != meta.end(), "snapshot ", path, " lacks '", key, "' in its metadata");
  const std::string& text = it->second;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  DDL_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(), "snapshot ", path, ": metadata '",
            key, "' is \"", text, "\", not an integer");
  DDL_CHECK(v >= lo && v <= hi, "snapshot ", path, ": metadata '", key, "' is ", v, ", outside [", lo, ", ", hi, "]");
  return v;
}

uint64_t unsigned_field(const std::map<std::string, std::string>& meta, const std::string& path, const char* key) {
  auto it = meta.find(key);
  DDL_CHECK(it != meta.end(), "snapshot ", path, " lacks '", key, "' in its metadata");
  const std::string& text = it->second;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  DDL_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(), "snapshot ", path, ": metadata '",
            key, "' is \"", text, "\", not an unsigned integer");
  return v;
}

// The command-line flag that sets an optimizer option, for messages.
std::string flag_of(const std::string& option) {
  std::string flag = "--" + option;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

// The optimizer's hyperparameters in the snapshot, other than lr (the schedule sets it from
// global_step), must be this run's: Optimizer::load_state restores them, as PyTorch's
// load_state_dict does, which would silently override the flags.
void check_hyperparameters(const std::map<std::string, std::string>& meta, const std::string& path,
                           const optim::Optimizer& opt) {
  const auto& groups = opt.param_groups();
  for (size_t g = 0; g < groups.size(); ++g)
    for (const auto& [option, value] : groups[g].options) {
      if (option == "lr" || option == "initial_lr") continue;
      const std::string key = kOpt + "group." + std::to_string(g) + "." + option;
      auto it = meta.find(key);
      if (it == meta.end()) continue;
      double saved = 0;
      const std::string& text = it->second;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), saved);
      DDL_CHECK(ec == std::errc() && end == text.data() + text.size() && std::isfinite(saved), "snapshot ", path,
                ": metadata '", key, "' is \"", text, "\", not a finite number");
      DDL_CHECK(saved == value, "snapshot ", path, " was taken with ", option, " ", saved, " but this run has ",
                flag_of(option), " ", value, ": pass ", flag_of(option), " ", saved,
                " to resume it, or delete the snapshot to start afresh");
    }
}
// Every tensor the snapshot holds (weights, buffers, optimizer state) as the run will hold
// it: in the model's dtype, or its parameter's for per-element optimizer state, since a
// float64 1e300 becomes float32's +inf. NaN momentum would otherwise poison every weight
// after one step, silently, and the next snapshot with it.
void check_finite(const nn::TensorFile& file, const std::string& path, const nn::Module& model,
                  const optim::Optimizer& opt) {
  std::map<std::string, DType> dtype_of;
  for (const auto& [name, v] : model.named_state()) dtype_of[name] = v.dtype();
  std::vector<DType> param_dtypes;
  for (const auto& g : opt.param_groups())
    for (const auto& p : g.params) param_dtypes.push_back(p.dtype());
  for (const auto& [name, t] : file.tensors) {
    DType as = t.dtype();
    if (auto it = dtype_of.find(name); it != dtype_of.end()) as = it->second;
    const std::string state = kOpt + "state.";
    if (name.rfind(state, 0) == 0 && t.numel() > 1) {  // "optimizer.state.<index>.<field>"
      size_t index = 0;
      const char* first = name.data() + state.size();
      const auto [end, ec] = std::from_chars(first, name.data() + name.size(), index);
      if (ec == std::errc() && end != first && index < param_dtypes.size()) as = param_dtypes[index];
    }
    const auto [nan, inf] = nn::count_nonfinite(is_floating(as) && is_floating(t.dtype()) ? t.to(as) : t);
    DDL_CHECK(
        nan + inf == 0, "snapshot ", path, ": tensor '", name, "' holds ", nan, " NaN and ", inf,
        " infinite values (of ", t.numel(), ")",
        as == t.dtype() ? std::string()
                        : std::string(" as ") + dtype_name(as) + ", the dtype the run holds it in (the file's is " +
                              dtype_name(t.dtype()) + ")",
        ": the state of a diverged run? Refused unless --allow-nonfinite; or delete the snapshot to start afresh");
  }
}
}  // namespace

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
                                             {"rng_offset", std::to_string(pos.rng_offset)},
                                             {"batch_size", std::to_string(pos.batch_size)}};
  // What the file holds no state for, and how a resume rebuilds it, for a reader of the file.
  meta["scheduler"] = "rebuilt from global_step (the schedule is a function of the step)";
  meta["sampler"] =
      "rebuilt from seed, epoch and step_in_epoch (shuffle seeded by seed + epoch; that epoch's first "
      "step_in_epoch batches are skipped)";
  meta["rng"] = "default generator restored to rng_offset; augmentation is seeded per sample by (seed, epoch, index)";
  for (const auto& [k, v] : opt.state_metadata()) meta[kOpt + k] = v;
  nn::save_safetensors(path, tensors, meta, 0600);  // the run's state: its owner's only
}

bool load_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt, TrainingPosition& pos,
                   bool allow_nonfinite) {
  if (!std::filesystem::exists(path)) return false;
  DDL_TRACE_SPAN("load snapshot", "snapshot");
  const nn::TensorFile file = nn::load_safetensors(path);
  TrainingPosition saved;
  const auto& meta = file.metadata;
  saved.epoch = integer_field(meta, path, "epoch", 0);
  saved.step_in_epoch = integer_field(meta, path, "step_in_epoch", 0);
  saved.global_step = integer_field(meta, path, "global_step", 0);
  saved.seed = unsigned_field(meta, path, "seed");
  saved.world_size = integer_field(meta, path, "world_size", 1);
  saved.rng_offset = unsigned_field(meta, path, "rng_offset");
  saved.batch_size = meta.count("batch_size") ? integer_field(meta, path, "batch_size", 0) : 0;
  DDL_CHECK(saved.seed == pos.seed && (saved.world_size == pos.world_size || pos.any_world_size), "snapshot ", path,
            " was taken with seed ", saved.seed, " and world size ", saved.world_size, "; this run has seed ", pos.seed,
            " and world size ", pos.world_size, ". Delete it or match the settings");
  // step_in_epoch counts batches: with another batch size the skipped batches would not be
  // the ones trained, and samples would be skipped untrained or trained twice.
  // At another world size the same global batch (batch size x world size) is as good: the
  // same samples make each step (see Note [Elastic resume]).
  const bool same_global = pos.any_world_size && saved.batch_size * saved.world_size == pos.batch_size * pos.world_size;
  DDL_CHECK(saved.batch_size == 0 || pos.batch_size == 0 || saved.batch_size == pos.batch_size || same_global,
            "snapshot ", path, " was taken with --batch-size ", saved.batch_size, " but this run has --batch-size ",
            pos.batch_size, ": pass --batch-size ", saved.batch_size,
            " to resume it, or delete the snapshot to start afresh");
  check_hyperparameters(meta, path, opt);
  if (!allow_nonfinite) check_finite(file, path, model, opt);
  nn::load_state(model, path, /*strict=*/false, allow_nonfinite);  // the optimizer's tensors are the only extras
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
  if (saved.batch_size == 0) saved.batch_size = pos.batch_size;
  pos = saved;
  return true;
}

void load_weights(const std::string& path, nn::Module& model, bool allow_nonfinite) {
  const nn::TensorFile file = nn::load_safetensors(path);
  const bool snapshot = file.metadata.count("global_step") > 0;
  if (snapshot) {
    std::set<std::string> state;
    for (const auto& [name, v] : model.named_state()) state.insert(name);
    for (const auto& [name, t] : file.tensors)
      DDL_CHECK(name.rfind(kOpt, 0) == 0 || state.count(name) > 0, "--load ", path, ": the snapshot holds '", name,
                "', which the model does not have (another --model?)");
  }
  nn::load_state(model, path, /*strict=*/!snapshot, allow_nonfinite);
}

}  // namespace ddl::ft
