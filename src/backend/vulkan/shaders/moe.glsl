// A token's expert slots, as backend/moe.h's moe_slots reads them from the dense gate: the
// experts with a nonzero weight, heaviest first, ties to the lower index, at most k (<= 64).
// DEFINE_SLOTS(X, TX) defines find_slots(t, k) over the gate tensor TX in binding X: every
// invocation of the workgroup must call it (it holds barriers); afterwards slot_expert[s]
// is slot s's expert for s < slot_count(k). Each invocation ranks its share of the experts
// against all of them, so no invocation walks the gate k times.
shared int slot_expert[64];
shared uint slot_nonzero;
uint slot_count(uint k) { return min(k, slot_nonzero); }

#define DEFINE_SLOTS(X, TX) \
  void find_slots(uint t, uint k) { \
    const uint n = t_ne(TX, 0), row = t_at(TX, t, 0, 0), step = t_nb(TX, 0); \
    if (gl_LocalInvocationID.x == 0) slot_nonzero = 0; \
    barrier(); \
    for (uint e = gl_LocalInvocationID.x; e < n; e += gl_WorkGroupSize.x) { \
      const float w = X##_f[(row + e * step) >> 2]; \
      if (w == 0.0) continue; \
      atomicAdd(slot_nonzero, 1); \
      uint rank = 0; \
      for (uint f = 0; f < n; ++f) { \
        const float v = X##_f[(row + f * step) >> 2]; \
        if (v != 0.0 && (v > w || (v == w && f < e))) ++rank; \
      } \
      if (rank < k) slot_expert[rank] = int(e); \
    } \
    barrier(); \
  }
