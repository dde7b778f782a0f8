#version 450
// Attention of one query head of one token per workgroup, over the cells in chunks of 64
// with a running max and sum (flash-attention style): each invocation scores one cell of a
// chunk, then accumulates output dims tid, tid + 64, ... over the chunk's cells.
// With SPLITS > 1 (decode on a GPU, where heads x tokens workgroups would leave most of the
// device idle and walk every cell one chunk after another), each (head, token) takes SPLITS
// workgroups, each over its share of the chunks; each writes its max, sum and unscaled
// output to the scratch binding, and the last to finish (a counter per (head, token))
// combines them and sets the counter back to 0 for the next pass.
// Op words: 0 = the positions' word offset, 1 = scale, 2 = softcap, 3 = causal, 4 = window,
// 5 = has sinks (src3, one per query head), 6 = the word offset of each cell's position
// (tagged cells, -1 empty; 0: cell j holds position j - the token's first cell), 7 = the
// word offset of each token's (first cell, cells) (several sequences; 0: every cell),
// 8 = SPLITS, 9 = the scratch word of the node's first counter, 10 = of its first partial.
#include "common.glsl"
#include "types.glsl"
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
DEFINE_ELEM(B, TYPE)
DEFINE_ELEM(C, TYPE)
// Coherent: the combining workgroup reads what the others wrote in this dispatch.
layout(std430, binding = 6) coherent buffer ScratchF { float S_f[]; };
layout(std430, binding = 6) coherent buffer ScratchU { uint S_u[]; };

const uint WG = 64, MAX_D = 256;
shared float q[MAX_D];
shared float p[WG];

// Workgroup-wide max and sum: each subgroup reduces, then every invocation combines the
// subgroups' results (two barriers instead of a tree's twelve).
shared float by_subgroup[WG];
float reduce_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) by_subgroup[gl_SubgroupID] = v;
  barrier();
  float r = by_subgroup[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) r = max(r, by_subgroup[i]);
  barrier();
  return r;
}
float reduce_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) by_subgroup[gl_SubgroupID] = v;
  barrier();
  float r = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) r += by_subgroup[i];
  barrier();
  return r;
}

// Loops over cells and dims load UNROLL values before using them: one invocation's chain of
// dependent loads was most of a decode step's time (40 us a layer on an H100).
const uint UNROLL = 8;

// q . the K row at byte kr, summed in dim order. F16 rows 16-byte aligned load 8 dims at once.
layout(std430, binding = 3) readonly buffer BV4 { uvec4 B_u4[]; };
float k_dot(uint kr, uint d_k) {
  float dot = 0.0;
  uint i = 0;
#ifdef TYPE_F16
  if ((kr & 15) == 0 && t_nb(T_SRC1, 0) == 2) {
    for (; i + 16 <= d_k; i += 16) {
      const uvec4 a = B_u4[(kr >> 4) + (i >> 3)], b = B_u4[(kr >> 4) + (i >> 3) + 1];
      const uint w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
      [[unroll]] for (uint u = 0; u < 8; ++u) {
        const vec2 h = unpackHalf2x16(w[u]);
        dot += q[i + 2 * u] * h.x;
        dot += q[i + 2 * u + 1] * h.y;
      }
    }
  }
#endif
  for (; i + UNROLL <= d_k; i += UNROLL) {
    float k[UNROLL];
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) k[u] = B_elem(kr, i + u);
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) dot += q[i + u] * k[u];
  }
  for (; i < d_k; ++i) dot += q[i] * B_elem(kr, i);
  return dot;
}

void main() {
  const uint d_k = t_ne(T_SRC0, 0), n_head = t_ne(T_SRC0, 1), tokens = t_ne(T_SRC0, 2);
  const uint n_head_kv = t_ne(T_SRC1, 1), n_kv = t_ne(T_SRC1, 2), d_v = t_ne(T_SRC2, 0);
  const uint splits = pu(8), g = group_index();
  if (g >= n_head * tokens * splits) return;
  const uint h = g % n_head, t = (g / n_head) % tokens, split = g / (n_head * tokens);
  const uint hk = h / (n_head / n_head_kv);
  const uint tid = gl_LocalInvocationID.x;
  const int pos = int(pw(pu(0), t));
  const float scale = pf(1), softcap = pf(2);
  const bool causal = pu(3) != 0;
  const int window = int(pu(4));
  const uint cells = pu(6), seqs = pu(7);
  // The token's sequence holds cells [first, first + n_cells): j below counts from first.
  const uint first = seqs == 0 ? 0 : pw(seqs, 2 * t), n_cells = seqs == 0 ? n_kv : pw(seqs, 2 * t + 1);
  // Visible cells lie in [lo, hi); tagged ones are checked one by one.
  const int hi = causal && cells == 0 ? min(pos + 1, int(n_cells)) : int(n_cells);
  const int lo = causal && window > 0 && cells == 0 ? max(pos - window + 1, 0) : 0;

  const uint qa = t_at(T_SRC0, h, t, 0), qs = t_nb(T_SRC0, 0);
  const uint k_base = t_at(T_SRC1, hk, first, 0), k_cell = t_nb(T_SRC1, 2);
  const uint v_base = t_at(T_SRC2, hk, first, 0), v_cell = t_nb(T_SRC2, 2);
  for (uint i = tid; i < d_k; i += WG) q[i] = A_f[(qa + i * qs) >> 2];
  barrier();

  float acc[MAX_D / WG];
  for (uint i = 0; i < MAX_D / WG; ++i) acc[i] = 0.0;
  float run_max = -1.0 / 0.0, run_sum = 0.0;
  // This workgroup's chunks: its share of those covering [lo, hi), ending at `end`.
  const int first_chunk = lo - (lo % int(WG));
  const uint chunks = hi > first_chunk ? (uint(hi - first_chunk) + WG - 1) / WG : 0;
  const uint share = (chunks + splits - 1) / splits;
  const int begin = first_chunk + int(min(split * share, chunks) * WG);
  const int end = min(hi, first_chunk + int(min((split + 1) * share, chunks) * WG));
  for (int j0 = begin; j0 < end; j0 += int(WG)) {
    const int j = j0 + int(tid);
    bool seen = j >= lo && j < end;
    if (seen && cells != 0) {
      const int c = int(pw(cells, first + uint(j)));
      seen = c >= 0 && (!causal || c <= pos) && (window == 0 || c > pos - window);
    }
    float s = -1.0 / 0.0;
    if (seen) {
      const float dot = k_dot(k_base + uint(j) * k_cell, d_k);
      s = scale * dot;
      if (softcap > 0.0) s = softcap * tanh(s / softcap);
    }
    const float new_max = max(run_max, reduce_max(s));
    const float e = seen ? exp(s - new_max) : 0.0;
    p[tid] = e;
    // Equal maxima (also both -inf: a chunk of tagged cells none of which is seen) keep all.
    const float alpha = run_max == new_max ? 1.0 : exp(run_max - new_max);
    run_sum = run_sum * alpha + reduce_sum(e);
    run_max = new_max;
    const uint n = uint(min(int(WG), end - j0));
    for (uint i = 0; i * WG + tid < d_v; ++i) {
      const uint d = i * WG + tid, vr = v_base + uint(j0) * v_cell;
      float a = acc[i] * alpha;
      uint c = 0;
      for (; c + UNROLL <= n; c += UNROLL) {  // loads first; unseen cells (p = 0) add nothing
        float v[UNROLL];
        [[unroll]] for (uint u = 0; u < UNROLL; ++u) v[u] = C_elem(vr + (c + u) * v_cell, d);
        [[unroll]] for (uint u = 0; u < UNROLL; ++u) a += p[c + u] != 0.0 ? p[c + u] * v[u] : 0.0;
      }
      for (; c < n; ++c) a += p[c] != 0.0 ? p[c] * C_elem(vr + c * v_cell, d) : 0.0;
      acc[i] = a;
    }
    barrier();
  }
  if (splits > 1) {
    const uint row = t * n_head + h, stride = d_v + 2, mine = pu(10) + (row * splits + split) * stride;
    if (tid == 0) {
      S_f[mine] = run_max;
      S_f[mine + 1] = run_sum;
    }
    for (uint i = 0; i * WG + tid < d_v; ++i) S_f[mine + 2 + i * WG + tid] = acc[i];
    memoryBarrierBuffer();
    barrier();
    if (tid == 0) p[0] = atomicAdd(S_u[pu(9) + row], 1u) == splits - 1 ? 1.0 : 0.0;
    barrier();
    if (p[0] == 0.0) return;  // another workgroup combines
    memoryBarrierBuffer();
    const uint first = pu(10) + row * splits * stride;
    run_max = -1.0 / 0.0;
    for (uint k = 0; k < splits; ++k) run_max = max(run_max, S_f[first + k * stride]);
    run_sum = 0.0;
    for (uint i = 0; i < MAX_D / WG; ++i) acc[i] = 0.0;
    for (uint k = 0; k < splits; ++k) {
      const float m = S_f[first + k * stride];
      const float w = m == -1.0 / 0.0 ? 0.0 : exp(m - run_max);  // a share that saw no cell adds 0
      run_sum += w * S_f[first + k * stride + 1];
      for (uint i = 0; i * WG + tid < d_v; ++i) acc[i] += w * S_f[first + k * stride + 2 + i * WG + tid];
    }
    if (tid == 0) S_u[pu(9) + row] = 0;
  }
  if (pu(5) != 0) {  // a sink: exp(sink) more in the denominator
    const float sink = E_f[(t_off(T_SRC3) + h * t_nb(T_SRC3, 0)) >> 2];
    const float new_max = max(run_max, sink);
    const float alpha = exp(run_max - new_max);
    run_sum = run_sum * alpha + exp(sink - new_max);
    for (uint i = 0; i < MAX_D / WG; ++i) acc[i] *= alpha;
  }
  const uint da = t_at(T_DST, h, t, 0), ds = t_nb(T_DST, 0);
  for (uint i = 0; i * WG + tid < d_v; ++i) {
    D_f[(da + (i * WG + tid) * ds) >> 2] = run_sum > 0.0 ? acc[i] / run_sum : 0.0;
  }
}
