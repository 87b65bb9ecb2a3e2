// One FSDP unit's bookkeeping, shared by fsdp.cpp (the step) and fsdp_state.cpp
// (whole state dicts). Internal: not installed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ddl/dist/fsdp/gather_buffer.h>
#include <ddl/dist/work.h>
#include <ddl/nn/module.h>

namespace ddl::dist::detail {

struct FsdpUnit {
  enum class State { Sharded, Gathering, Gathered };

  std::string name;                    // dotted submodule name; "" for the root unit
  std::shared_ptr<nn::Module> module;  // null for the root unit
  std::vector<Variable> params;        // the module's own parameter handles
  std::vector<std::string> names;
  std::vector<int64_t> offsets;  // of each parameter in the flat buffer
  int64_t numel = 0, shard_numel = 0;
  int64_t padded() const { return shard_numel * world; }
  int world = 1;
  DType dtype = DType::Float32;
  std::unique_ptr<GatherBuffer> buffer;  // null when the unit holds no parameters
  Variable shard;                        // this rank's slice [shard_numel]: a leaf the optimizer steps

  State state = State::Sharded;
  std::shared_ptr<Work> gather;
  size_t pending = 0;    // gradients still to arrive in this backward
  bool reduced = false;  // its reduce-scatter is launched for this backward
  Tensor rs_input, rs_output;
  std::shared_ptr<Work> rs_work;
  std::vector<int> grad_hook_ids;

  // flat[offsets[i] : offsets[i] + numel_i] viewed as parameter i's shape.
  Tensor slot(const Tensor& flat, size_t i) const { return flat.narrow(0, offsets[i], numel_of[i]).view(shape_of[i]); }
  std::vector<Shape> shape_of;  // parameter shapes (the parameters read as [0] while sharded)
  std::vector<int64_t> numel_of;
};

}  // namespace ddl::dist::detail
