// The cosines and sines RoPE rotates by, computed once for every backend (ref and cpu
// kernels, the Vulkan backend's table) with ggml's float steps, YaRN included, so each
// device rotates by the same angles to the last bit.
//   std::vector<float> cs(n_dims);  // cos, sin pairs
//   rope_angles(pos, params, cs.data());
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace paddock {

// The n_dims / 2 (cos, sin) pairs of position `pos`: out[2i] = cos, out[2i + 1] = sin of
// pair i's angle, scaled by YaRN's magnitude factor when p.ext_factor != 0 (ggml_rope_yarn).
void rope_angles(int32_t pos, const RopeParams& p, float* out);

}  // namespace paddock
