#include "model/weights.h"

#include <array>
#include <charconv>
#include <limits>
#include <vector>

namespace paddock {

namespace {

std::string shape_string(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

constexpr int64_t kOutputLayer = std::numeric_limits<int64_t>::max();  // beyond every layer

// il of a "blk.<il>.*" name, else nullopt.
std::optional<int64_t> block_of(std::string_view name) {
  constexpr std::string_view kBlk = "blk.";
  if (!name.starts_with(kBlk)) return std::nullopt;
  int64_t il = 0;
  const char* first = name.data() + kBlk.size();
  const auto [end, ec] = std::from_chars(first, name.data() + name.size(), il);
  if (ec != std::errc() || end == first || end == name.data() + name.size() || *end != '.') return std::nullopt;
  return il;
}

// The pass part a weight belongs to (Backend::for_layer): blk.<il>.* is layer il, a table
// rows are gathered from is the input, the rest (output, output_norm, and token_embd when
// tied as the output) is the output.
int64_t layer_of(const std::string& name, Use use) {
  if (const std::optional<int64_t> il = block_of(name)) return *il;
  return use == Use::kGetRows ? -1 : kOutputLayer;
}

// The op a weight of this use is src0 of (kCount: a parameter).
Op use_op(Use use) {
  switch (use) {
    case Use::kParam: return Op::kCount;
    case Use::kMulMat: return Op::kMulMat;
    case Use::kMulMatId: return Op::kMulMatId;
    case Use::kGetRows: return Op::kGetRows;
  }
  return Op::kCount;
}

std::vector<int64_t> trimmed(std::vector<int64_t> ne) {
  while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
  return ne;
}

}  // namespace

FitRequest offload_weights(const gguf::File& file, int64_t n_layer) {
  FitRequest r;
  r.layer_weights.assign(static_cast<size_t>(n_layer), 0);
  const bool tied = file.find_tensor("output.weight") == nullptr;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.name.starts_with("v.") || t.name.starts_with("mm.")) continue;
    if (const std::optional<int64_t> il = block_of(t.name)) {
      if (*il >= 0 && *il < n_layer) r.layer_weights[static_cast<size_t>(*il)] += t.n_bytes;
    } else if (t.name != "token_embd.weight" || tied) {
      r.output_weights += t.n_bytes;
    }
  }
  return r;
}

int64_t offloadable_layers(const gguf::File& file, int64_t n_layer, const Backend& be, std::string* blocker) {
  const bool tied = file.find_tensor("output.weight") == nullptr;
  int64_t lowest_ok = 0;  // layers from here up run on `be`
  bool output_ok = true;
  std::string stopped_by;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.ne.size() < 2 || t.name.starts_with("v.") || t.name.starts_with("mm.")) continue;
    const std::optional<int64_t> il = block_of(t.name);
    if (!il && t.name == "token_embd.weight" && !tied) continue;  // gathered on the CPU
    const Op op = t.name.find("_exps") != std::string::npos ? Op::kMulMatId : Op::kMulMat;
    const std::array<DType, 3> types = {t.type, DType::kF32, DType::kF32};
    if (be.supports(op, types)) continue;
    const std::string why = std::string(t.name) + " (" + std::string(dtype_name(t.type)) + ")";
    if (!il) {
      output_ok = false;
      if (stopped_by.empty()) stopped_by = why;
    } else if (*il >= 0 && *il < n_layer && *il + 1 > lowest_ok) {
      lowest_ok = *il + 1;
      stopped_by = why;
    }
  }
  const int64_t n = lowest_ok == 0 && output_ok ? n_layer + 1 : n_layer - lowest_ok;
  if (blocker != nullptr) *blocker = n == n_layer + 1 ? std::string() : stopped_by;
  return n;
}

std::string blk(int64_t il, std::string_view suffix) {
  return "blk." + std::to_string(il) + "." + std::string(suffix);
}

std::optional<int64_t> WeightBinder::dim(const std::string& name, size_t i) const {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return std::nullopt;
  return i < t->ne.size() ? t->ne[i] : 1;
}

Result<TensorView> WeightBinder::tensor(const std::string& name, std::initializer_list<int64_t> ne, Use use,
                                       Bind bind) {
  PADDOCK_ASSIGN(TensorView v, bind_view(name, ne, use, bind));
  prepare(v, name, use);
  return v;
}

Result<std::vector<TensorView>> WeightBinder::split_rows(const std::string& name, int64_t n_in,
                                                         std::span<const int64_t> parts, Use use) {
  int64_t rows = 0;
  for (int64_t p : parts) rows += p;
  PADDOCK_ASSIGN(const TensorView all, bind_view(name, {n_in, rows}, use, Bind::kOnce));
  std::vector<TensorView> out;
  int64_t first = 0;
  for (int64_t p : parts) {
    TensorView v = all.shifted(static_cast<size_t>(first) * all.nb[1]);
    v.ne[1] = p;
    v.nb[2] = v.nb[3] = v.nb[1] * static_cast<size_t>(p);
    prepare(v, name, use);
    out.push_back(v);
    first += p;
  }
  return out;
}

void WeightBinder::prepare(const TensorView& v, const std::string& name, Use use) {
  backend_.for_layer(layer_of(name, use)).prepare_weight(v, use_op(use));
}

Result<TensorView> WeightBinder::bind_view(const std::string& name, std::initializer_list<int64_t> ne, Use use,
                                          Bind bind) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (t == nullptr) return corrupt("missing tensor " + name);
  if (!bound_.insert(name).second && bind != Bind::kDuplicated) {
    return internal_error("tensor " + name + " is bound twice without Bind::kDuplicated");
  }
  const std::vector<int64_t> want(ne);
  // Trailing dims of 1 may be listed or not: [n] and [n, 1] are the same tensor.
  if (trimmed(want) != trimmed(t->ne)) {
    return corrupt("tensor " + name + ": expected " + shape_string(want) + ", found " + shape_string(t->ne));
  }
  const DTypeInfo& info = dtype_info(t->type);
  if (want[0] % info.block_size != 0) {
    return corrupt("tensor " + name + ": row of " + std::to_string(want[0]) + " is not a whole number of " +
                   std::string(info.name) + " blocks");
  }
  const std::span<const uint8_t> data = file_.tensor_data(*t);
  TensorView v = TensorView::weight(data.data(), t->type, ne);
  v.buffer = &weights_;
  v.offset = static_cast<size_t>(data.data() - file_.bytes().data());
  if (data.size() < v.nb[3] * static_cast<size_t>(v.ne[3])) {
    return corrupt("tensor " + name + ": data is " + std::to_string(data.size()) + " bytes, shape needs more");
  }
  if (reinterpret_cast<uintptr_t>(data.data()) % 4 != 0) {
    return corrupt("tensor " + name + ": data is not 4-byte aligned");
  }
  if (use == Use::kParam) {
    if (v.type != DType::kF32) {
      return unsupported("tensor " + name + ": expected type F32, found " + std::string(dtype_name(v.type)));
    }
    return v;
  }
  const Op op = use_op(use);
  const std::array<DType, 3> types = {v.type, DType::kF32, DType::kF32};
  Backend& be = backend_.for_layer(layer_of(name, use));
  if (!be.supports(op, types)) {
    return unsupported("tensor " + name + ": type " + std::string(dtype_name(v.type)) +
                       " is not supported by the " + std::string(be.name()) + " backend for " +
                       std::string(op_name(op)));
  }
  return v;
}

Result<std::optional<TensorView>> WeightBinder::optional(const std::string& name, std::initializer_list<int64_t> ne,
                                                         Use use) {
  if (!has(name)) return std::optional<TensorView>();
  PADDOCK_ASSIGN(TensorView v, tensor(name, ne, use));
  return std::optional<TensorView>(v);
}

}  // namespace paddock
