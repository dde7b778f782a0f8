// llama.cpp's per-tensor quantization mixes on a llama3.2-1b-shaped tensor list, with the
// expected types written out by hand from llama_tensor_get_type.
#include "quant/mix.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace paddock {
namespace {

struct Model {
  std::vector<std::string> names;
  std::vector<MixTensor> tensors;
};

// llama3.2-1b: 16 layers, 32/8 heads, n_embd 2048, n_ff 8192, 128256 tokens; tied output
// unless `untied`.
Model llama32_1b(bool untied) {
  Model m;
  std::vector<std::pair<std::string, std::pair<int, int64_t>>> spec;  // name, (n_dims, ne0)
  spec.push_back({"token_embd.weight", {2, 2048}});
  spec.push_back({"output_norm.weight", {1, 2048}});
  spec.push_back({"rope_freqs.weight", {1, 32}});
  if (untied) spec.push_back({"output.weight", {2, 2048}});
  for (int l = 0; l < 16; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up"}) {
      spec.push_back({p + n + ".weight", {2, 2048}});
    }
    spec.push_back({p + "ffn_down.weight", {2, 8192}});
    spec.push_back({p + "attn_norm.weight", {1, 2048}});
    spec.push_back({p + "ffn_norm.weight", {1, 2048}});
  }
  for (auto& s : spec) m.names.push_back(s.first);
  for (size_t i = 0; i < spec.size(); ++i) {
    m.tensors.push_back({m.names[i], DType::kF32, spec[i].second.first, spec[i].second.second});
  }
  return m;
}

MixModel llama32_1b_model() {
  MixModel mm;
  mm.n_layer = 16;
  mm.n_head = 32;
  mm.n_head_kv = 8;
  return mm;
}

std::map<std::string, DType> plan(FileType ft, bool untied = false) {
  const Model m = llama32_1b(untied);
  const std::vector<DType> types = plan_mix(ft, m.tensors, llama32_1b_model());
  std::map<std::string, DType> out;
  for (size_t i = 0; i < types.size(); ++i) out[m.names[i]] = types[i];
  return out;
}

std::string blk(int l, const char* t) { return "blk." + std::to_string(l) + "." + t + ".weight"; }

// use_more_bits(i, 16): i < 2 || i >= 14 || (i - 2) % 3 == 2.
const std::set<int> kMoreBits16 = {0, 1, 4, 7, 10, 13, 14, 15};

void expect_norms_stay_f32(const std::map<std::string, DType>& p) {
  EXPECT_EQ(p.at("output_norm.weight"), DType::kF32);
  EXPECT_EQ(p.at("rope_freqs.weight"), DType::kF32);
  for (int l = 0; l < 16; ++l) {
    EXPECT_EQ(p.at(blk(l, "attn_norm")), DType::kF32);
    EXPECT_EQ(p.at(blk(l, "ffn_norm")), DType::kF32);
  }
}

TEST(Mix, Q4_K_M) {
  const auto p = plan(FileType::kQ4_K_M);
  EXPECT_EQ(p.at("token_embd.weight"), DType::kQ6_K);  // tied: treated as the output
  for (int l = 0; l < 16; ++l) {
    const DType more = kMoreBits16.count(l) ? DType::kQ6_K : DType::kQ4_K;
    EXPECT_EQ(p.at(blk(l, "attn_v")), more) << l;
    EXPECT_EQ(p.at(blk(l, "ffn_down")), more) << l;
    for (const char* n : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"}) {
      EXPECT_EQ(p.at(blk(l, n)), DType::kQ4_K) << l << " " << n;
    }
  }
  expect_norms_stay_f32(p);
}

TEST(Mix, Q4_K_M_Untied) {
  const auto p = plan(FileType::kQ4_K_M, true);
  EXPECT_EQ(p.at("output.weight"), DType::kQ6_K);
  EXPECT_EQ(p.at("token_embd.weight"), DType::kQ4_K);
}

TEST(Mix, Q5_K_M) {
  const auto p = plan(FileType::kQ5_K_M);
  EXPECT_EQ(p.at("token_embd.weight"), DType::kQ6_K);
  for (int l = 0; l < 16; ++l) {
    const DType more = kMoreBits16.count(l) ? DType::kQ6_K : DType::kQ5_K;
    EXPECT_EQ(p.at(blk(l, "attn_v")), more) << l;
    EXPECT_EQ(p.at(blk(l, "ffn_down")), more) << l;
    EXPECT_EQ(p.at(blk(l, "attn_output")), DType::kQ5_K) << l;
    EXPECT_EQ(p.at(blk(l, "ffn_up")), DType::kQ5_K) << l;
  }
  expect_norms_stay_f32(p);
}

TEST(Mix, Q3_K_M) {
  const auto p = plan(FileType::kQ3_K_M);
  EXPECT_EQ(p.at("token_embd.weight"), DType::kQ6_K);
  for (int l = 0; l < 16; ++l) {
    EXPECT_EQ(p.at(blk(l, "attn_v")), l < 2 ? DType::kQ5_K : DType::kQ4_K) << l;
    EXPECT_EQ(p.at(blk(l, "ffn_down")), l < 1 ? DType::kQ5_K : DType::kQ4_K) << l;
    EXPECT_EQ(p.at(blk(l, "attn_output")), DType::kQ4_K) << l;
    for (const char* n : {"attn_q", "attn_k", "ffn_gate", "ffn_up"})
      EXPECT_EQ(p.at(blk(l, n)), DType::kQ3_K) << n;
  }
  expect_norms_stay_f32(p);
}

TEST(Mix, UniformTypes) {
  struct Case {
    FileType ft;
    DType body;
    DType embd;
  };
  for (const Case& c :
       {Case{FileType::kQ6_K, DType::kQ6_K, DType::kQ6_K}, Case{FileType::kQ8_0, DType::kQ8_0, DType::kQ8_0},
        Case{FileType::kQ4_0, DType::kQ4_0, DType::kQ6_K}, Case{FileType::kF16, DType::kF16, DType::kF16}}) {
    const auto p = plan(c.ft);
    EXPECT_EQ(p.at("token_embd.weight"), c.embd) << *file_type_name(c.ft);
    for (int l = 0; l < 16; ++l) {
      for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
        EXPECT_EQ(p.at(blk(l, n)), c.body) << *file_type_name(c.ft) << " " << l << " " << n;
      }
    }
    expect_norms_stay_f32(p);
  }
}

TEST(Mix, LayersCountInNumericOrderNotNameOrder) {
  // With 16 layers, name order would visit blk.10 third; llama.cpp sorts by layer number.
  const auto p = plan(FileType::kQ4_K_M);
  EXPECT_EQ(p.at(blk(4, "attn_v")), DType::kQ6_K);
  EXPECT_EQ(p.at(blk(12, "attn_v")), DType::kQ4_K);
}

TEST(Mix, RowLengthsThatBlocksDoNotDivideFallBack) {
  MixContext ctx;
  ctx.model = llama32_1b_model();
  ctx.model.n_attention_wv = 16;
  // 896 = 3.5 K-quant blocks (qwen2-0.5b): Q4_K -> Q5_0, Q6_K -> Q8_0.
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "blk.3.attn_q.weight", 896, ctx), DType::kQ5_0);
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "output.weight", 896, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(FileType::kQ3_K_M, "blk.3.attn_q.weight", 896, ctx), DType::kIQ4_NL);
  EXPECT_EQ(tensor_type_for(FileType::kQ5_K_M, "blk.3.attn_q.weight", 896, ctx), DType::kQ5_1);
  // 48: Q4_K falls back to Q5_0, whose 32-element blocks do not divide 48 either -> F16.
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "blk.3.attn_q.weight", 48, ctx), DType::kF16);
}

TEST(Mix, GqaAndExpertRules) {
  MixContext ctx;
  ctx.model = llama32_1b_model();  // n_gqa 4
  ctx.model.n_attention_wv = 16;
  EXPECT_EQ(tensor_type_for(FileType::kQ2_K, "blk.5.attn_v.weight", 2048, ctx), DType::kQ4_K);
  ctx.model.n_head_kv = 32;
  EXPECT_EQ(tensor_type_for(FileType::kQ2_K, "blk.5.attn_v.weight", 2048, ctx), DType::kQ3_K);
  ctx.model.n_expert = 8;
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "blk.5.attn_v.weight", 2048, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "blk.5.attn_k.weight", 2048, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(FileType::kQ4_K_M, "blk.5.attn_output.weight", 2048, ctx), DType::kQ5_K);
}

TEST(Mix, Mxfp4MoeExpertsMxfp4TheRestQ8_0) {
  const MixContext ctx;
  const FileType ft = FileType::kMXFP4_MOE;
  EXPECT_EQ(tensor_type_for(ft, "blk.0.ffn_up_exps.weight", 2880, ctx, 32), DType::kMXFP4);
  EXPECT_EQ(tensor_type_for(ft, "blk.0.ffn_down_exps.weight", 2880, ctx, 32), DType::kMXFP4);
  EXPECT_EQ(tensor_type_for(ft, "blk.0.ffn_down.weight", 2880, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(ft, "blk.0.attn_v.weight", 2880, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(ft, "token_embd.weight", 2880, ctx), DType::kQ8_0);
  EXPECT_EQ(tensor_type_for(ft, "output.weight", 2880, ctx), DType::kQ8_0);
  // A dense model gets no MXFP4 at all.
  for (const auto& [name, type] : plan(ft)) {
    if (type != DType::kF32) {
      EXPECT_EQ(type, DType::kQ8_0) << name;
    }
  }
}

TEST(Mix, WhatIsQuantized) {
  EXPECT_TRUE(mix_quantizes("blk.0.attn_q.weight", 2));
  EXPECT_FALSE(mix_quantizes("blk.0.attn_norm.weight", 2));
  EXPECT_FALSE(mix_quantizes("blk.0.attn_v.bias", 1));
  EXPECT_FALSE(mix_quantizes("rope_freqs.weight", 1));
  EXPECT_FALSE(mix_quantizes("blk.0.ffn_gate_inp.weight", 2));
}

TEST(FileTypes, IdsAndNamesAreLlamaCpps) {
  EXPECT_EQ(static_cast<uint32_t>(FileType::kQ4_K_M), 15u);
  EXPECT_EQ(file_type_from_id(17), FileType::kQ5_K_M);
  EXPECT_EQ(file_type_from_id(12), FileType::kQ3_K_M);
  EXPECT_EQ(file_type_from_id(7), FileType::kQ8_0);
  EXPECT_EQ(file_type_from_id(1), FileType::kF16);
  EXPECT_EQ(file_type_from_id(4), std::nullopt);  // retired
  EXPECT_EQ(file_type_from_name("q4_k_m"), FileType::kQ4_K_M);
  EXPECT_EQ(file_type_from_name("Q6_K"), FileType::kQ6_K);
  EXPECT_EQ(file_type_from_name("q4_k_x"), std::nullopt);
  EXPECT_EQ(file_type_name(FileType::kQ4_0), "Q4_0");
  EXPECT_EQ(file_type_base(FileType::kQ3_K_M), DType::kQ3_K);
  EXPECT_EQ(file_type_from_id(38), FileType::kMXFP4_MOE);
  EXPECT_EQ(file_type_from_name("mxfp4_moe"), FileType::kMXFP4_MOE);
  EXPECT_EQ(file_type_base(FileType::kMXFP4_MOE), DType::kMXFP4);
}

}  // namespace
}  // namespace paddock
