// ZeroRedundancyOptimizer, and the step, consolidation and optimizer cloning the zero1 and
// zero2 sync strategies share with it.
#include <ddl/dist/sync/common.h>
#include <ddl/dist/zero/zero_optimizer.h>
#include <ddl/optim/adam.h>
#include <ddl/optim/sgd.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

namespace detail {

void zero_step(ZeroShards& shards, optim::Optimizer& whole, optim::Optimizer& local, double* comm_ms) {
  auto& wg = whole.param_groups();
  auto& lg = local.param_groups();
  DDL_CHECK(wg.size() == lg.size(), "ZeroRedundancyOptimizer step: the optimizer has ", wg.size(),
            " parameter groups but its shards were made for ", lg.size(),
            " (groups cannot be added after construction)");
  for (size_t g = 0; g < wg.size(); ++g) lg[g].options = wg[g].options;  // lr schedules act on `whole`
  // See Note [Whole state in, whole state out] in docs/sharded.md.
  auto loaded = whole.state_tensors();
  if (!loaded.empty()) {
    shards.load_whole_state(local, loaded);
    whole.load_state({}, whole.state_metadata());
  }
  const double reduce_ms = timed_ms([&] { shards.reduce_gradients(); });
  {
    DDL_TRACE_SPAN("zero local step", "zero");
    local.step();
  }
  const double gather_ms = timed_ms([&] { shards.gather_parameters(); });
  if (comm_ms) *comm_ms = reduce_ms + gather_ms;
}

void zero_consolidate(ZeroShards& shards, optim::Optimizer& whole, const optim::Optimizer& local, int to_rank) {
  auto state = shards.whole_state(local, to_rank);
  if (to_rank < 0 || shards.group().rank() == to_rank) whole.load_state(state, whole.state_metadata());
}

std::unique_ptr<optim::Optimizer> clone_optimizer(const optim::Optimizer& app,
                                                  const std::vector<std::vector<Variable>>& groups) {
  const auto& ag = app.param_groups();
  DDL_CHECK(!ag.empty() && ag.size() == groups.size(), "zero: the optimizer has ", ag.size(),
            " parameter groups, its shards ", groups.size());
  const std::map<std::string, double>& o = ag[0].options;
  const auto at = [&](const char* k) { return o.at(k); };
  std::unique_ptr<optim::Optimizer> out;
  if (dynamic_cast<const optim::AdamW*>(&app) != nullptr)
    out = std::make_unique<optim::AdamW>(groups[0], optim::AdamWOptions(at("lr"))
                                                        .betas({at("beta1"), at("beta2")})
                                                        .eps(at("eps"))
                                                        .weight_decay(at("weight_decay"))
                                                        .amsgrad(at("amsgrad") != 0));
  else if (dynamic_cast<const optim::Adam*>(&app) != nullptr)
    out = std::make_unique<optim::Adam>(groups[0], optim::AdamOptions(at("lr"))
                                                       .betas({at("beta1"), at("beta2")})
                                                       .eps(at("eps"))
                                                       .weight_decay(at("weight_decay"))
                                                       .amsgrad(at("amsgrad") != 0));
  else if (dynamic_cast<const optim::SGD*>(&app) != nullptr)
    out = std::make_unique<optim::SGD>(groups[0], optim::SGDOptions(at("lr"))
                                                      .momentum(at("momentum"))
                                                      .dampening(at("dampening"))
                                                      .weight_decay(at("weight_decay"))
                                                      .nesterov(at("nesterov") != 0));
  DDL_CHECK(out != nullptr,
            "zero: cannot shard this optimizer's state: the zero strategies rebuild SGD, Adam and AdamW, whose "
            "updates are elementwise; for another, build a ZeroRedundancyOptimizer with a factory for it");
  for (size_t g = 1; g < groups.size(); ++g) out->add_param_group(groups[g], ag[g].options);
  return out;
}

}  // namespace detail

namespace {
std::map<std::string, double> local_defaults(const optim::Optimizer& local) {
  DDL_CHECK(!local.param_groups().empty(), "ZeroRedundancyOptimizer: the factory's optimizer has no parameter group");
  return local.param_groups()[0].options;
}

std::pair<std::unique_ptr<detail::ZeroShards>, std::unique_ptr<optim::Optimizer>> make_parts(
    const std::vector<Variable>& params, std::shared_ptr<ProcessGroup> group, const LocalOptimizerFactory& make_local,
    const ZeroOptions& options) {
  DDL_CHECK(make_local != nullptr, "ZeroRedundancyOptimizer: the local optimizer factory is empty");
  auto shards = std::make_unique<detail::ZeroShards>(std::vector<std::vector<Variable>>{params}, std::move(group),
                                                     options.stage(), options.bucket_bytes());
  auto local = make_local(shards->local_groups()[0]);
  DDL_CHECK(local != nullptr, "ZeroRedundancyOptimizer: the factory returned no optimizer");
  return {std::move(shards), std::move(local)};
}
}  // namespace

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Variable> params, std::shared_ptr<ProcessGroup> group,
                                                 LocalOptimizerFactory make_local, ZeroOptions options)
    : ZeroRedundancyOptimizer(params, make_parts(params, std::move(group), make_local, options)) {}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(
    std::vector<Variable> params,
    std::pair<std::unique_ptr<detail::ZeroShards>, std::unique_ptr<optim::Optimizer>> parts)
    : Optimizer(local_defaults(*parts.second)), shards_(std::move(parts.first)), local_(std::move(parts.second)) {
  add_param_group(params);
  std::vector<Tensor> values;
  for (const Variable& p : params) values.push_back(p.data());
  detail::coalesced(values, [&](const Tensor& flat) { shards_->group().broadcast(flat, 0); });
}

void ZeroRedundancyOptimizer::step() {
  DDL_TRACE_SPAN("zero step", "zero");
  detail::zero_step(*shards_, *this, *local_);
}

void ZeroRedundancyOptimizer::consolidate_state_dict(int to_rank) {
  DDL_CHECK(to_rank >= 0, "consolidate_state_dict: to_rank must be a rank, got ", to_rank);
  detail::zero_consolidate(*shards_, *this, *local_, to_rank);
}

}  // namespace ddl::dist
