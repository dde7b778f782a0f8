// Binds GGUF tensors by name to views over the mapped file (no copy), checking shape, type
// and size, with errors that name the tensor: "tensor blk.3.attn_q.weight: expected
// [256, 256], found [256, 128]". Views name `weights`, a buffer over the file's bytes; the
// backend must already have adopted them (Backend::adopt_weight_file).
//   WeightBinder b(file, backend, weights);
//   PADDOCK_ASSIGN(TensorView wq, b.matrix(blk(0, "attn_q.weight"), n_embd, n_embd_q));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock {

// "blk.<il>.<suffix>"
std::string blk(int64_t il, std::string_view suffix);

class WeightBinder {
 public:
  WeightBinder(const gguf::File& file, Backend& backend, Buffer& weights)
      : file_(file), backend_(backend), weights_(weights) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // ne[i] of a tensor as the file declares it; nullopt when absent (1 beyond its dims).
  std::optional<int64_t> dim(const std::string& name, size_t i) const;
  // A [ne0, ne1] matrix of any type the backend can use in `op` (mul_mat or get_rows). A
  // mul_mat matrix is handed to Backend::prepare_weight, so layouts are built at load time.
  Result<TensorView> matrix(const std::string& name, int64_t ne0, int64_t ne1, Op op = Op::kMulMat) const;
  // An F32 vector of n elements: norm weights, biases, rope factors.
  Result<TensorView> vector(const std::string& name, int64_t n) const;
  // The same, absent -> nullopt (a present tensor of the wrong shape is still an error).
  Result<std::optional<TensorView>> optional_vector(const std::string& name, int64_t n) const;

 private:
  Result<TensorView> bind(const std::string& name, std::initializer_list<int64_t> ne) const;

  const gguf::File& file_;
  Backend& backend_;
  Buffer& weights_;
};

}  // namespace paddock
