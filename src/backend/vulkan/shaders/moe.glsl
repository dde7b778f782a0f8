// A token's expert slots, as backend/moe.h's moe_slots reads them from the dense gate: the
// experts with a nonzero weight, heaviest first, ties to the lower index, at most k (<= 64).
// DEFINE_SLOTS(X, TX) defines find_slots(t, k) over the gate tensor TX in binding X: every
// invocation of the workgroup must call it (it holds barriers); afterwards slot_expert[s]
// is slot s's expert for s < slot_count(k). The gate's nonzero weights (k of them, from
// moe_gate) are first gathered into shared memory, then each is ranked against the others
// there: one pass over the gate instead of one per chosen expert. A gate with more than 64
// nonzero weights is ranked from the gate itself.
shared int slot_expert[64];
shared uint slot_nonzero;
shared int nonzero_expert[64];
shared float nonzero_weight[64];
uint slot_count(uint k) { return min(k, slot_nonzero); }

// Whether weight v of expert f goes before weight w of expert e.
bool slot_before(float v, uint f, float w, uint e) { return v > w || (v == w && f < e); }

#define DEFINE_SLOTS(X, TX) \
  void find_slots(uint t, uint k) { \
    const uint n = t_ne(TX, 0), row = t_at(TX, t, 0, 0), step = t_nb(TX, 0); \
    if (gl_LocalInvocationID.x == 0) slot_nonzero = 0; \
    barrier(); \
    for (uint e = gl_LocalInvocationID.x; e < n; e += gl_WorkGroupSize.x) { \
      const float w = X##_f[(row + e * step) >> 2]; \
      if (w == 0.0) continue; \
      const uint at = atomicAdd(slot_nonzero, 1); \
      if (at < 64) { \
        nonzero_expert[at] = int(e); \
        nonzero_weight[at] = w; \
      } \
    } \
    barrier(); \
    const uint count = slot_nonzero; \
    if (count <= 64) { \
      for (uint i = gl_LocalInvocationID.x; i < count; i += gl_WorkGroupSize.x) { \
        const uint e = uint(nonzero_expert[i]); \
        const float w = nonzero_weight[i]; \
        uint rank = 0; \
        for (uint j = 0; j < count; ++j) { \
          if (slot_before(nonzero_weight[j], uint(nonzero_expert[j]), w, e)) ++rank; \
        } \
        if (rank < k) slot_expert[rank] = int(e); \
      } \
    } else { \
      for (uint e = gl_LocalInvocationID.x; e < n; e += gl_WorkGroupSize.x) { \
        const float w = X##_f[(row + e * step) >> 2]; \
        if (w == 0.0) continue; \
        uint rank = 0; \
        for (uint f = 0; f < n; ++f) { \
          const float v = X##_f[(row + f * step) >> 2]; \
          if (v != 0.0 && slot_before(v, f, w, e)) ++rank; \
        } \
        if (rank < k) slot_expert[rank] = int(e); \
      } \
    } \
    barrier(); \
  }
