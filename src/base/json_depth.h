// How deep a JSON text nests, found by a scan of its bytes, without parsing it. A parsed
// document is later copied, compared and dumped by recursive code, so a value nested tens of
// thousands of levels (a few hundred KB of brackets) overflows the stack; callers refuse such
// text before parsing it. For valid JSON the scan equals the real depth; for invalid JSON it
// may be anything, and the parser rejects the text anyway.
//   if (json_too_deep(body)) return invalid_argument("...");
#pragma once

#include <cstddef>
#include <string_view>

namespace paddock {

// The most nesting any JSON input may have: far beyond any real request (Ollama's schemas
// and tool definitions nest a dozen levels), far below what a thread's stack survives.
inline constexpr size_t kMaxJsonDepth = 512;

// True when arrays and objects in `text` nest deeper than `max_depth` (brackets inside
// strings do not count). Stops at the first level past the limit.
bool json_too_deep(std::string_view text, size_t max_depth = kMaxJsonDepth);

}  // namespace paddock
