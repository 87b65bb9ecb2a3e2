// ModuleHolder<M>: LibTorch's value-semantic module handle (torch/nn/pimpl.h). A holder
// is a std::shared_ptr<M> with the module's call syntax: copies share one module,
// `holder->weight`, `holder(x)`, `holder.ptr()`, `Holder h{nullptr}` (empty, assigned
// later). DDL_MODULE(Net) declares the holder class `Net` for a module class `NetImpl`, as
// TORCH_MODULE does. ddl's own layer classes stay modules (`nn::Linear` is what LibTorch
// calls LinearImpl); ddl/torch.h declares the holders under LibTorch's names.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <ddl/nn/module.h>

namespace ddl::nn {

template <typename Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // A new module from its default constructor, as LibTorch's holders do.
  ModuleHolder() requires std::is_default_constructible_v<Contained> : impl_(std::make_shared<Contained>()) {}
  // An empty holder (`nn::Linear fc{nullptr};`), to be assigned later, e.g. by register_module.
  ModuleHolder(std::nullptr_t) {}                                                // NOLINT: implicit, as LibTorch's
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT: implicit on purpose
  // A new module from the module's constructor arguments: Linear(4, 2), Conv2d(Conv2dOptions(3, 8, 3)).
  template <typename Head, typename... Tail>
  requires(!std::is_same_v<std::remove_cvref_t<Head>, std::nullptr_t> &&
           !std::is_base_of_v<ModuleHolder, std::remove_cvref_t<Head>> &&
           !std::is_same_v<std::remove_cvref_t<Head>, std::shared_ptr<Contained>> &&
           std::is_constructible_v<Contained, Head, Tail...>) explicit(sizeof...(Tail) == 0)
      ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  Contained* get() {
    DDL_CHECK(impl_ != nullptr, "ModuleHolder: the module is empty (made from nullptr and never assigned)");
    return impl_.get();
  }
  const Contained* get() const {
    DDL_CHECK(impl_ != nullptr, "ModuleHolder: the module is empty (made from nullptr and never assigned)");
    return impl_.get();
  }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return !is_empty(); }

  // holder(args...): the module's forward(args...) (LibTorch's rule), or its call operator
  // for the loss modules that have no forward of that arity.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    if constexpr (requires(Contained & m) { m.forward(std::forward<Args>(args)...); })
      return get()->forward(std::forward<Args>(args)...);
    else
      return (*get())(std::forward<Args>(args)...);
  }
  // Indexing, for containers: seq[0], dict["key"].
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  std::shared_ptr<Contained> impl_;
};

namespace detail {
// True for ModuleHolder<M> and for the classes DDL_MODULE declares.
template <typename T>
concept ModuleHolderType = requires(const T& h) {
  typename T::ContainedType;
  requires std::is_base_of_v<ModuleHolder<typename T::ContainedType>, T>;
  requires std::is_base_of_v<Module, typename T::ContainedType>;
};
}  // namespace detail

}  // namespace ddl::nn

// DDL_MODULE(Net): `class Net`, the holder of `NetImpl` (LibTorch's TORCH_MODULE).
#define DDL_MODULE(Name)                                     \
  class Name : public ::ddl::nn::ModuleHolder<Name##Impl> {  \
   public:                                                   \
    using ::ddl::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
    using ::ddl::nn::ModuleHolder<Name##Impl>::get;          \
  }
