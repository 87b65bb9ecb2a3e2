// CPU sgd_update_: the composite of elementwise ops (tensor/ops/sgd_update.cpp), which
// the CPU's vectorised loops already run at memory speed; no fused kernel of its own.
#include <ddl/tensor/ops/sgd_update.h>

namespace ddl::cpu {
DDL_REGISTER_KERNEL(kernels::sgd_update_kernel, CPU, &detail::sgd_update_composite);
}  // namespace ddl::cpu
