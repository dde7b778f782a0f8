// The kernels' SPIR-V, compiled from shaders/*.comp at build time (cmake/vulkan_shaders.cmake)
// and linked into the binary: one blob per variant, named <shader>[_<types>], e.g.
// "mul_mat_q4_k", "copy_f32_q8_0", "add".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace paddock {

// The variant's SPIR-V words, or an empty span when there is none by that name.
std::span<const uint32_t> shader_spirv(std::string_view name);

}  // namespace paddock
