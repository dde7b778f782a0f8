// get_rows and mul_mat: the two ops that read weights of any type.
#include <vector>

#include "backend/ref/kernels.h"
#include "base/check.h"
#include "quant/quant.h"

namespace paddock::ref {

void get_rows(const TensorView& table, std::span<const int32_t> ids, const TensorView& dst) {
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.nb[0] == sizeof(float));
  PADDOCK_CHECK(dst.ne[0] == table.ne[0] && dst.ne[1] == static_cast<int64_t>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    PADDOCK_CHECK(ids[i] >= 0 && ids[i] < table.ne[1]);
    read_row(table.type, table.row(ids[i]), reinterpret_cast<float*>(dst.row(static_cast<int64_t>(i))),
             table.ne[0]);
  }
}

bool quantized_activations(DType t) {
  const QuantOps* ops = quant_ops(t);
  return ops != nullptr && ops->vec_dot != nullptr && dtype_info(t).block_size > 1;
}

QuantizedColumns::QuantizedColumns(DType w_type, const TensorView& x) : ops_(*quant_ops(w_type)) {
  PADDOCK_CHECK(x.type == DType::kF32 && x.nb[0] == sizeof(float));
  row_bytes_ = dtype_row_bytes(ops_.vec_dot_type, x.ne[0]);
  cols_ = x.ne[1] * x.ne[2] * x.ne[3];
  data_.resize(row_bytes_ * static_cast<size_t>(cols_));
  const QuantizeRowFn q = from_float(ops_.vec_dot_type);
  for (int64_t c = 0; c < cols_; ++c) {
    q(reinterpret_cast<const float*>(x.row(c % x.ne[1], c / x.ne[1] % x.ne[2], c / (x.ne[1] * x.ne[2]))),
      column(c), x.ne[0]);
  }
}

float QuantizedColumns::dot(const void* w_row, int64_t c, int64_t k) const {
  float out = 0;
  ops_.vec_dot(k, &out, w_row, column(c));
  return out;
}

void mul_mat(const TensorView& w, const TensorView& x, const TensorView& dst) {
  const int64_t k = w.ne[0];
  const int64_t m = w.ne[1];
  PADDOCK_CHECK(w.ne[2] == 1 && w.ne[3] == 1);
  PADDOCK_CHECK(x.type == DType::kF32 && x.nb[0] == sizeof(float) && x.ne[0] == k);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.ne[0] == m && dst.ne[1] == x.ne[1] && dst.ne[2] == x.ne[2] &&
                dst.ne[3] == x.ne[3]);
  if (quantized_activations(w.type) && w.nb[0] == dtype_info(w.type).type_size) {
    const QuantizedColumns act(w.type, x);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t c = 0; c < act.cols(); ++c) {
        dst.f32(r, c % x.ne[1], c / x.ne[1] % x.ne[2], c / (x.ne[1] * x.ne[2])) = act.dot(w.row(r), c, k);
      }
    }
    return;
  }
  // Each weight row is dequantized once and reused for every activation column.
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < m; ++r) {
    // F32 rows are used in place; others are converted first.
    const float* wr = reinterpret_cast<const float*>(w.row(r));
    if (w.type != DType::kF32 || w.nb[0] != sizeof(float)) {
      read_row(w.type, w.row(r), row.data(), k);
      wr = row.data();
    }
    for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
      for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
        for (int64_t j = 0; j < x.ne[1]; ++j) {
          const float* col = reinterpret_cast<const float*>(x.row(j, i2, i3));
          dst.f32(r, j, i2, i3) = dot_f32(wr, col, k);
        }
      }
    }
  }
}

}  // namespace paddock::ref
