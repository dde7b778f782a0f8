// Elementwise ops: mul/add with broadcasting, SwiGLU, GEGLU, GELU, scale, and type-converting copy.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/gelu.h"
#include "backend/ref/kernels.h"
#include "base/check.h"
#include "base/fp16.h"

namespace paddock::ref {

namespace {

// a op b, with b repeated along each dim where it is smaller (ggml_can_repeat).
template <typename F>
void binary(const TensorView& a, const TensorView& b, const TensorView& dst, F f) {
  PADDOCK_CHECK(a.type == DType::kF32 && b.type == DType::kF32 && dst.type == DType::kF32);
  PADDOCK_CHECK(a.same_shape(dst));
  for (int d = 0; d < 4; ++d) PADDOCK_CHECK(b.ne[d] > 0 && a.ne[d] % b.ne[d] == 0);
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
          dst.f32(i0, i1, i2, i3) =
              f(a.f32(i0, i1, i2, i3), b.f32(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
        }
      }
    }
  }
}

float load(const TensorView& v, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const uint8_t* p = v.row(i1, i2, i3) + i0 * v.nb[0];
  uint16_t h;
  switch (v.type) {
    case DType::kF32: return *reinterpret_cast<const float*>(p);
    case DType::kF16: std::memcpy(&h, p, 2); return fp16_to_f32(h);
    case DType::kBF16: std::memcpy(&h, p, 2); return bf16_to_f32(h);
    default: PADDOCK_CHECK_MSG(false, "copy supports F32, F16 and BF16");
  }
  return 0;
}

void store(const TensorView& v, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float x) {
  uint8_t* p = v.row(i1, i2, i3) + i0 * v.nb[0];
  uint16_t h;
  switch (v.type) {
    case DType::kF32: *reinterpret_cast<float*>(p) = x; return;
    case DType::kF16:
      h = f32_to_fp16(x);
      std::memcpy(p, &h, 2);
      return;
    case DType::kBF16:
      h = f32_to_bf16(x);
      std::memcpy(p, &h, 2);
      return;
    default: PADDOCK_CHECK_MSG(false, "copy supports F32, F16 and BF16");
  }
}

}  // namespace

void mul(const TensorView& a, const TensorView& b, const TensorView& dst) {
  binary(a, b, dst, [](float x, float y) { return x * y; });
}

void add(const TensorView& a, const TensorView& b, const TensorView& dst) {
  binary(a, b, dst, [](float x, float y) { return x + y; });
}

namespace {

// dst = f(a, b) element by element, all F32 of one shape (b may be a itself).
template <typename F>
void each(const TensorView& a, const TensorView& b, const TensorView& dst, F f) {
  PADDOCK_CHECK(a.same_shape(b) && a.same_shape(dst));
  PADDOCK_CHECK(a.type == DType::kF32 && b.type == DType::kF32 && dst.type == DType::kF32);
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
          dst.f32(i0, i1, i2, i3) = f(a.f32(i0, i1, i2, i3), b.f32(i0, i1, i2, i3));
        }
      }
    }
  }
}

}  // namespace

void swiglu(const TensorView& gate, const TensorView& up, const TensorView& dst) {
  each(gate, up, dst, [](float g, float u) { return g / (1.0f + std::exp(-g)) * u; });
}

void swiglu_oai(const TensorView& gate, const TensorView& up, float alpha, float limit,
                const TensorView& dst) {
  each(gate, up, dst, [alpha, limit](float g, float u) {
    const float x = std::min(g, limit);
    const float y = std::clamp(u, -limit, limit);
    return x / (1.0f + std::exp(alpha * (-x))) * (y + 1.0f);
  });
}

void geglu(const TensorView& gate, const TensorView& up, const TensorView& dst) {
  each(gate, up, dst, [](float g, float u) { return gelu_ggml(g) * u; });
}

void scale(const TensorView& x, float s, const TensorView& dst) {
  each(x, x, dst, [s](float v, float) { return v * s; });
}

void gelu(const TensorView& x, const TensorView& dst) {
  each(x, x, dst, [](float v, float) { return gelu_ggml(v); });
}

void tanh(const TensorView& x, const TensorView& dst) {
  each(x, x, dst, [](float v, float) { return std::tanh(v); });
}

void copy(const TensorView& src, const TensorView& dst) {
  PADDOCK_CHECK(src.same_shape(dst));
  for (int64_t i3 = 0; i3 < src.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < src.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < src.ne[1]; ++i1) {
        for (int64_t i0 = 0; i0 < src.ne[0]; ++i0) store(dst, i0, i1, i2, i3, load(src, i0, i1, i2, i3));
      }
    }
  }
}

}  // namespace paddock::ref
