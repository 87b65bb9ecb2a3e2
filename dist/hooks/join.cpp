// Join's loop: a joined rank all-reduces a zero where the others all-reduce a one, and
// shadows an iteration for as long as the sum is positive.
#include <exception>

#include <ddl/dist/hooks/join.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

namespace {

// Sum over ranks of `mine` (the ranks still training send 1, the joined 0).
int64_t count_active(ProcessGroup& pg, float mine) {
  Tensor t = full(Shape{1}, double(mine));
  pg.all_reduce(t, ReduceOp::Sum);
  return static_cast<int64_t>(t.item());
}

}  // namespace

Join::Join(std::vector<Joinable*> joinables, JoinOptions opts) : joinables_(std::move(joinables)), opts_(opts) {
  DDL_CHECK(!joinables_.empty(), "Join: expected at least one joinable");
  for (size_t i = 0; i < joinables_.size(); ++i) {
    DDL_CHECK(joinables_[i] != nullptr, "Join: joinable ", i, " is null");
    DDL_CHECK(!joinables_[i]->join_enabled_, "Join: joinable ", i, " already belongs to an active Join");
    DDL_CHECK(&joinables_[i]->join_process_group() == &joinables_[0]->join_process_group(), "Join: joinable ", i,
              " uses another process group than joinable 0");
    hooks_.push_back(joinables_[i]->join_hook(opts_));
    joinables_[i]->join_enabled_ = opts_.enable;
    joinables_[i]->join_first_ = i == 0;
    joinables_[i]->join_throw_ = opts_.throw_on_early_termination;
  }
}

Join::~Join() noexcept(false) {
  if (!done_ && std::uncaught_exceptions() == 0) join();
  detach();
}

void Join::detach() {
  for (Joinable* j : joinables_) j->join_enabled_ = j->join_first_ = j->join_throw_ = false;
}

void Join::join() {
  if (done_) return;
  done_ = true;
  if (!opts_.enable) return detach();
  ProcessGroup& pg = joinables_[0]->join_process_group();
  bool last_joiner = true;
  // Matches each notify_join_context of the ranks still training (one all-reduce per iteration).
  while (count_active(pg, 0) > 0) {
    if (opts_.throw_on_early_termination) {
      count_active(pg, 1);  // answers the others' check in notify_join_context
      detach();
      DDL_CHECK(false, pg.log_prefix(), " Join: this rank ran out of inputs before the others ",
                "(throw_on_early_termination)");
    }
    for (auto& h : hooks_) h->main_hook();
    last_joiner = false;
  }
  for (auto& h : hooks_) h->post_hook(last_joiner);
  detach();
}

int64_t Join::notify_join_context(Joinable& joinable) {
  if (!joinable.join_enabled_ || !joinable.join_first_) return -1;
  ProcessGroup& pg = joinable.join_process_group();
  const int64_t active = count_active(pg, 1);
  if (joinable.join_throw_) {  // PyTorch's second all-reduce: has any rank joined?
    const int64_t joined = count_active(pg, 0);
    DDL_CHECK(joined == 0, pg.log_prefix(), " Join: ", joined, " rank(s) ran out of inputs before this one ",
              "(throw_on_early_termination)");
  }
  return active;
}

}  // namespace ddl::dist
