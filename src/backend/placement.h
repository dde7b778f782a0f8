// Which backend computes each part of a model's pass, and how many layers fit on a device.
// Parts are llama.cpp's: the input (token embeddings, layer -1), the repeating layers
// 0..n_layer-1, and the output (final norm and projection, layer n_layer). Offloading n
// layers (llama.cpp's -ngl, Ollama's num_gpu) puts the last n repeating layers on the
// offload backend and, once n > n_layer, the output too; the input stays on the base.
//   Placement p = Placement::offload(hp.n_layer, fit_offload(request), /*base=*/0, /*offload=*/1);
//   p.backend(il)  // index into the split backend's list
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace paddock {

class Placement {
 public:
  // Every part on backend 0.
  explicit Placement(int64_t n_layer) : parts_(static_cast<size_t>(n_layer + 2), 0) {}
  // n_offload is clamped to 0 .. n_layer + 1.
  static Placement offload(int64_t n_layer, int64_t n_offload, int base, int offload);

  int64_t n_layer() const { return static_cast<int64_t>(parts_.size()) - 2; }
  // layer -1 .. n_layer; parts outside that range go with the nearest end.
  int backend(int64_t layer) const;

 private:
  std::vector<int> parts_;  // parts_[layer + 1]
};

// What fitting layers on a device weighs, in bytes.
struct FitRequest {
  std::vector<uint64_t> layer_weights;  // per repeating layer
  uint64_t output_weights = 0;
  uint64_t kv_per_layer = 0;  // every cache the model will hold, one layer's share
  uint64_t compute = 0;       // the compute buffer of a pass on the device
  uint64_t free = 0;          // the device's free memory
};

// Ollama's default num_gpu: the most layers, taken from the last one down and the output
// counted after them all, whose weights and KV cells fit beside the compute buffer.
int64_t fit_offload(const FitRequest& r);

}  // namespace paddock
