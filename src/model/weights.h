// Binds GGUF tensors by name to views over the mapped file (no copy), checking shape, type
// and size, with errors that name the tensor: "tensor blk.3.attn_q.weight: expected
// [256, 256], found [256, 128]". Views name `weights`, a buffer over the file's bytes; the
// backend must already have adopted them (Backend::adopt_weight_file). Each file tensor is
// bound once unless the second binding says kDuplicated (an output tied to token_embd), so
// an arch file that binds a name twice by mistake fails at load.
//   WeightBinder b(file, backend, weights);
//   PADDOCK_ASSIGN(TensorView wq, b.tensor(blk(0, "attn_q.weight"), {n_embd, n_embd_q}, Use::kMulMat));
//   PADDOCK_ASSIGN(auto bq, b.optional(blk(0, "attn_q.bias"), {n_embd_q}));
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "backend/placement.h"
#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock {

// "blk.<il>.<suffix>"
std::string blk(int64_t il, std::string_view suffix);

// The weight bytes of each of n_layer layers and of the output (token_embd too when the
// output is tied to it), as fit_offload (backend/placement.h) weighs them. An embedded
// vision tower (v.*, mm.*: Ollama's gemma3 files) is no part of the text model's weights.
FitRequest offload_weights(const gguf::File& file, int64_t n_layer);

// The most layers `be` can take as num_gpu counts them (the last repeating layers, then the
// output: n_layer + 1 for all): those whose every matrix has a type `be` multiplies (experts'
// stacks by mul_mat_id). `blocker`, when the answer is short of all, names the first matrix
// that stopped it and its type.
int64_t offloadable_layers(const gguf::File& file, int64_t n_layer, const Backend& be, std::string* blocker);

// What a weight is for; it decides the types it may have.
enum class Use : uint8_t {
  kParam,    // F32: norm weights, biases, rope factors
  kMulMat,   // the weight of a mul_mat: any type the backend multiplies; prepared at load
  kMulMatId,  // a stack of experts' matrices [K, M, n_expert] (mul_mat_id): likewise
  kGetRows,  // a table rows are gathered from (token embeddings): any type the backend gathers
};

enum class Bind : uint8_t {
  kOnce,        // the first binding of this file tensor
  kDuplicated,  // a file tensor already bound for another use
};

class WeightBinder {
 public:
  WeightBinder(const gguf::File& file, Backend& backend, Buffer& weights)
      : file_(file), backend_(backend), weights_(weights) {}

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
  // ne[i] of a tensor as the file declares it; nullopt when absent (1 beyond its dims).
  std::optional<int64_t> dim(const std::string& name, size_t i) const;
  // A tensor of 1 to 4 dims `ne` (trailing 1s in the file are ignored). kMulMat and kGetRows
  // weights are checked against, and kMulMat weights prepared by (layouts built at load
  // time), the backend of their layer (Backend::for_layer: blk.<il>.* is layer il).
  Result<TensorView> tensor(const std::string& name, std::initializer_list<int64_t> ne, Use use = Use::kParam,
                            Bind bind = Bind::kOnce);
  // The same, absent -> nullopt (a present tensor of the wrong shape or type is an error).
  Result<std::optional<TensorView>> optional(const std::string& name, std::initializer_list<int64_t> ne,
                                             Use use = Use::kParam);
  // A fused matrix [n_in, sum(parts)] as consecutive row blocks [n_in, parts[i]] (phi3's
  // attn_qkv, its ffn_up holding gate and up): each block is a weight of its own, prepared
  // as one.
  Result<std::vector<TensorView>> split_rows(const std::string& name, int64_t n_in, std::span<const int64_t> parts,
                                             Use use = Use::kMulMat);

 private:
  // tensor() without the backend's preparation.
  Result<TensorView> bind_view(const std::string& name, std::initializer_list<int64_t> ne, Use use, Bind bind);
  void prepare(const TensorView& v, const std::string& name, Use use);

  const gguf::File& file_;
  Backend& backend_;
  Buffer& weights_;
  std::set<std::string, std::less<>> bound_;
};

}  // namespace paddock
