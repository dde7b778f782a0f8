// The version reported by `paddock --version` and /api/version.
#pragma once

namespace paddock::cli {
inline constexpr const char* kVersion = "0.1.0";
}
