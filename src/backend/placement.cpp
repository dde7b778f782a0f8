#include "backend/placement.h"

#include <algorithm>

namespace paddock {

Placement Placement::offload(int64_t n_layer, int64_t n_offload, int base, int offload) {
  Placement p(n_layer);
  const int64_t n = std::clamp<int64_t>(n_offload, 0, n_layer + 1);
  // As llama.cpp: layer il is offloaded when il >= n_layer - n, the output once n > n_layer.
  for (int64_t il = 0; il <= n_layer; ++il) {
    const bool offloaded = il < n_layer ? il >= n_layer - n : n > n_layer;
    p.parts_[static_cast<size_t>(il + 1)] = offloaded ? offload : base;
  }
  p.parts_[0] = base;
  return p;
}

int Placement::backend(int64_t layer) const {
  if (layer < 0) return parts_.front();
  if (layer >= n_layer()) return parts_.back();
  return parts_[static_cast<size_t>(layer + 1)];
}

int64_t fit_offload(const FitRequest& r) {
  if (r.free <= r.compute) return 0;
  uint64_t left = r.free - r.compute;
  int64_t n = 0;
  for (auto it = r.layer_weights.rbegin(); it != r.layer_weights.rend(); ++it) {
    const uint64_t need = *it + r.kv_per_layer;
    if (need > left) return n;
    left -= need;
    ++n;
  }
  return r.output_weights <= left ? n + 1 : n;
}

}  // namespace paddock
