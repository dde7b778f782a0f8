// paddock's own version: `paddock --version` and /api/version's paddock_version.
#pragma once

namespace paddock::cli {
inline constexpr const char* kVersion = "0.1.0";
}
