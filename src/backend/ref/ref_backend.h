// The reference backend: every op, plainly and single-threaded. It is the oracle that the
// cpu and cuda backends are tested against, so it stays simple and nobody optimises it
// beyond keeping the golden tests fast. Weight rows are dequantized to F32 with the quant
// table's reference functions, once per row per call, then dotted in F32.
//   std::unique_ptr<Backend> be = make_ref_backend();
#pragma once

#include <cstddef>
#include <memory>

#include "backend/backend.h"

namespace paddock {

struct RefBackendOptions {
  // When nonzero, mul_mat keeps each F16 or BF16 weight matrix it converts to F32 (block
  // types are multiplied with quantized activations instead), keyed by address, until
  // this many bytes are held (then it dequantizes per call as usual). The numbers are
  // identical either way; it only saves repeating the work at every decode step. The backend
  // must then not be used with new weights at an address it has seen (one backend per
  // loaded model).
  size_t dequant_cache_bytes = 0;
};

std::unique_ptr<Backend> make_ref_backend(const RefBackendOptions& options = {});

}  // namespace paddock
