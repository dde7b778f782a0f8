// A transcription of llama.cpp's llama_tensor_get_type (src/llama-quant.cpp) for the file
// types paddock writes, with the branch order kept so it can be compared line by line.
#include "quant/mix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <string>
#include <utility>

namespace paddock {

namespace {

struct FileTypeRow {
  FileType type;
  std::string_view name;
  DType base;
};

constexpr std::array<FileTypeRow, 19> kFileTypes = {{
    {FileType::kAllF32, "F32", DType::kF32},
    {FileType::kF16, "F16", DType::kF16},
    {FileType::kQ4_0, "Q4_0", DType::kQ4_0},
    {FileType::kQ4_1, "Q4_1", DType::kQ4_1},
    {FileType::kQ8_0, "Q8_0", DType::kQ8_0},
    {FileType::kQ5_0, "Q5_0", DType::kQ5_0},
    {FileType::kQ5_1, "Q5_1", DType::kQ5_1},
    {FileType::kQ2_K, "Q2_K", DType::kQ2_K},
    {FileType::kQ3_K_S, "Q3_K_S", DType::kQ3_K},
    {FileType::kQ3_K_M, "Q3_K_M", DType::kQ3_K},
    {FileType::kQ3_K_L, "Q3_K_L", DType::kQ3_K},
    {FileType::kQ4_K_S, "Q4_K_S", DType::kQ4_K},
    {FileType::kQ4_K_M, "Q4_K_M", DType::kQ4_K},
    {FileType::kQ5_K_S, "Q5_K_S", DType::kQ5_K},
    {FileType::kQ5_K_M, "Q5_K_M", DType::kQ5_K},
    {FileType::kQ6_K, "Q6_K", DType::kQ6_K},
    {FileType::kQ2_K_S, "Q2_K_S", DType::kQ2_K},
    {FileType::kBF16, "BF16", DType::kBF16},
    {FileType::kMXFP4_MOE, "MXFP4_MOE", DType::kMXFP4},
}};

const FileTypeRow* find_row(FileType t) {
  for (const FileTypeRow& r : kFileTypes) {
    if (r.type == t) return &r;
  }
  return nullptr;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_quantized(DType t) { return t != DType::kF32 && t != DType::kF16 && t != DType::kBF16; }

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// The fallback when a K-quant's 256-element block does not divide the row length.
DType incompatible_fallback(DType t, int64_t ne0) {
  DType f = DType::kF16;
  switch (t) {
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kIQ4_XS: f = DType::kIQ4_NL; break;
    case DType::kQ4_K: f = DType::kQ5_0; break;
    case DType::kQ5_K: f = DType::kQ5_1; break;
    case DType::kQ6_K: f = DType::kQ8_0; break;
    default: return t;
  }
  return ne0 % dtype_info(f).block_size == 0 ? f : DType::kF16;
}

// The layer of a "blk.N." tensor, -1 for others (llama.cpp's sscanf("blk.%d.")).
int layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  int layer = 0;
  size_t i = kPrefix.size();
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    layer = std::min(layer * 10 + (name[i] - '0'), 1 << 24);
  }
  return layer;
}

}  // namespace

std::optional<std::string_view> file_type_name(FileType t) {
  const FileTypeRow* r = find_row(t);
  return r ? std::optional<std::string_view>(r->name) : std::nullopt;
}

std::optional<FileType> file_type_from_name(std::string_view name) {
  for (const FileTypeRow& r : kFileTypes) {
    if (r.name.size() == name.size() &&
        std::equal(r.name.begin(), r.name.end(), name.begin(), [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
        })) {
      return r.type;
    }
  }
  return std::nullopt;
}

std::optional<FileType> file_type_from_id(uint32_t id) {
  const FileType t = static_cast<FileType>(id);
  return find_row(t) ? std::optional<FileType>(t) : std::nullopt;
}

DType file_type_base(FileType t) {
  const FileTypeRow* r = find_row(t);
  return r ? r->base : DType::kF32;
}

bool mix_quantizes(std::string_view name, int n_dims) {
  constexpr std::string_view kSuffix = "weight";
  if (name.size() < kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) return false;
  if (n_dims < 2) return false;
  for (std::string_view skip : {"_norm.weight",
                                "ffn_gate_inp.weight",
                                "altup",
                                "laurel",
                                "per_layer_model_proj",
                                "ssm_conv1d.weight",
                                "shortconv.conv.weight",
                                "time_mix_first.weight",
                                "time_mix_w0.weight",
                                "time_mix_w1.weight",
                                "time_mix_w2.weight",
                                "time_mix_v0.weight",
                                "time_mix_v1.weight",
                                "time_mix_v2.weight",
                                "time_mix_a0.weight",
                                "time_mix_a1.weight",
                                "time_mix_a2.weight",
                                "time_mix_g1.weight",
                                "time_mix_g2.weight",
                                "time_mix_decay_w1.weight",
                                "time_mix_decay_w2.weight",
                                "time_mix_lerp_fused.weight",
                                "attn_rel_b.weight",
                                ".position_embd."}) {
    if (contains(name, skip)) return false;
  }
  return name != "position_embd.weight" && name != "token_types.weight";
}

DType tensor_type_for(FileType ftype, std::string_view name, int64_t ne0, const MixContext& ctx,
                      int64_t ne2) {
  const MixModel& m = ctx.model;
  DType t = file_type_base(ftype);
  if (!is_quantized(t)) return t;  // float file types: every quantizable tensor gets the base
  const bool falcon = m.arch == "falcon";
  const int n_gqa = m.n_head_kv > 0 ? m.n_head / m.n_head_kv : 1;
  using F = FileType;

  if (name == "output.weight" || (!m.has_output && name == "token_embd.weight")) {
    if (ftype == F::kMXFP4_MOE || falcon || ne0 % dtype_info(t).block_size != 0) {
      t = DType::kQ8_0;
    } else if (t != DType::kQ8_0) {
      t = DType::kQ6_K;
    }
  } else if (ftype == F::kMXFP4_MOE) {
    // Expert tensors (3-D, one matrix per expert) MXFP4, everything else Q8_0.
    t = ne2 > 1 ? DType::kMXFP4 : DType::kQ8_0;
  } else if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") {
    // Only IQ and ternary file types change the token embedding; none of ours does.
  } else if (contains(name, "attn_v.weight")) {
    if (ftype == F::kQ2_K) {
      t = n_gqa >= 4 ? DType::kQ4_K : DType::kQ3_K;
    } else if (ftype == F::kQ2_K_S && n_gqa >= 4) {
      t = DType::kQ4_K;
    } else if (ftype == F::kQ3_K_M) {
      t = ctx.i_attention_wv < 2 ? DType::kQ5_K : DType::kQ4_K;
    } else if (ftype == F::kQ3_K_L) {
      t = DType::kQ5_K;
    } else if ((ftype == F::kQ4_K_M || ftype == F::kQ5_K_M) &&
               use_more_bits(ctx.i_attention_wv, m.n_attention_wv)) {
      t = DType::kQ6_K;
    } else if (ftype == F::kQ4_K_S && ctx.i_attention_wv < 4) {
      t = DType::kQ5_K;
    }
    if (m.is_70b && (t == DType::kQ3_K || t == DType::kQ4_K)) t = DType::kQ5_K;
    if (m.n_expert == 8) t = DType::kQ8_0;
  } else if (contains(name, "attn_k.weight")) {
    if (m.n_expert == 8) t = DType::kQ8_0;
  } else if (contains(name, "ffn_down")) {
    // Experts of one layer are not consecutive in files, so MoE models take the layer from the name.
    const int i_layer = m.n_expert > 1 ? layer_of(name) : ctx.i_ffn_down;
    const int n_layer = m.n_layer;
    if (ftype == F::kQ2_K) {
      t = DType::kQ3_K;
    } else if (ftype == F::kQ2_K_S) {
      if (i_layer < n_layer / 8) t = DType::kQ4_K;
    } else if (ftype == F::kQ3_K_M) {
      t = i_layer < n_layer / 16                       ? DType::kQ5_K
          : !falcon || use_more_bits(i_layer, n_layer) ? DType::kQ4_K
                                                       : DType::kQ3_K;
    } else if (ftype == F::kQ3_K_L) {
      t = falcon ? DType::kQ4_K : DType::kQ5_K;
    } else if (ftype == F::kQ4_K_M) {
      if (falcon) {
        t = i_layer < n_layer / 16            ? DType::kQ6_K
            : use_more_bits(i_layer, n_layer) ? DType::kQ5_K
                                              : DType::kQ4_K;
      } else if (use_more_bits(i_layer, n_layer)) {
        t = DType::kQ6_K;
      }
    } else if (ftype == F::kQ5_K_M && use_more_bits(i_layer, n_layer)) {
      t = DType::kQ6_K;
    } else if (ftype == F::kQ4_K_S && !falcon && i_layer < n_layer / 8) {
      t = DType::kQ5_K;
    }
  } else if (contains(name, "attn_output.weight")) {
    if (!falcon) {
      if (m.n_expert == 8) {
        if (ftype == F::kQ2_K || ftype == F::kQ3_K_S || ftype == F::kQ3_K_M || ftype == F::kQ4_K_S ||
            ftype == F::kQ4_K_M) {
          t = DType::kQ5_K;
        }
      } else if (ftype == F::kQ2_K) {
        t = DType::kQ3_K;
      } else if (ftype == F::kQ3_K_M) {
        t = DType::kQ4_K;
      } else if (ftype == F::kQ3_K_L) {
        t = DType::kQ5_K;
      }
    } else if (ftype == F::kQ3_K_L) {
      t = DType::kQ4_K;
    }
  } else if (contains(name, "attn_qkv.weight")) {
    if (ftype == F::kQ3_K_M || ftype == F::kQ3_K_L) {
      t = DType::kQ4_K;
    } else if (ftype == F::kQ4_K_M) {
      t = DType::kQ5_K;
    } else if (ftype == F::kQ5_K_M) {
      t = DType::kQ6_K;
    }
  }
  if (ne0 % dtype_info(t).block_size != 0) t = incompatible_fallback(t, ne0);
  return t;
}

std::vector<DType> plan_mix(FileType ftype, std::span<const MixTensor> tensors, MixModel model) {
  model.n_attention_wv = 0;
  model.has_output = false;
  for (const MixTensor& t : tensors) {
    if (contains(t.name, "attn_v.weight") || contains(t.name, "attn_qkv.weight") ||
        contains(t.name, "attn_kv_b.weight")) {
      ++model.n_attention_wv;
    } else if (t.name == "output.weight") {
      model.has_output = true;
    }
  }
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // llama.cpp's weight_name_comparer: by layer (non-layer tensors first), then by name.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name);
    const int lb = layer_of(tensors[b].name);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });

  MixContext ctx{model, 0, 0};
  std::vector<DType> out(tensors.size());
  for (size_t i : order) {
    const MixTensor& t = tensors[i];
    if (!mix_quantizes(t.name, t.n_dims)) {
      out[i] = t.type;
      continue;
    }
    out[i] = tensor_type_for(ftype, t.name, t.ne0, ctx, t.ne2);
    if (!is_quantized(file_type_base(ftype))) continue;  // llama.cpp counts only in quantized mixes
    if (contains(t.name, "attn_v.weight")) {
      ++ctx.i_attention_wv;
    } else if (contains(t.name, "ffn_down")) {
      ++ctx.i_ffn_down;
    }
  }
  return out;
}

}  // namespace paddock
