// The whole table: every family's rows, in a fixed order (the runner numbers cases in this order).
#include "sweep.h"

namespace ddl::sweep {

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  add_elementwise_rows(rows);
  add_compare_rows(rows);
  add_reduce_rows(rows);
  add_shape_rows(rows);
  add_index_rows(rows);
  add_factory_rows(rows);
  add_nn_rows(rows);
  add_sequence_rows(rows);
  add_conv_rows(rows);
  add_loss_rows(rows);
  add_loss2_rows(rows);
  add_backward_rows(rows);
  add_method_rows(rows);
  add_activation_rows(rows);
  add_math_rows(rows);
  add_reduce2_rows(rows);
  add_linalg_rows(rows);
  add_seq_models_rows(rows);
  add_pool_nd_rows(rows);
  add_layers_more_rows(rows);
  add_rounding_rows(rows);
  add_spelling_rows(rows);
  return rows;
}

}  // namespace ddl::sweep
