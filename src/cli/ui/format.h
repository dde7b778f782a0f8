// Human-readable numbers, times and tables exactly as Ollama's CLI prints them:
// format.HumanBytes ("4.7 GB", decimal units), format.HumanTime ("2 hours ago",
// "4 minutes from now", "Forever"), Go's time.Duration.String() ("1.5s", "312.5ms") for the
// --verbose timings, and the borderless NAME/ID/SIZE tables of `list` and `ps`.
// Pure functions of their arguments (the clock is passed in), so they are unit-tested.
//   std::printf("%s\n", human_bytes(4'700'000'000).c_str());  // "4.7 GB"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace paddock::cli::ui {

// Decimal units as Ollama: "512 B", "1.5 KB", "12 MB", "4.7 GB", "1 TB".
std::string human_bytes(int64_t bytes);
// Ollama's humanDuration: "Less than a second", "1 second", "About a minute", "3 hours"...
std::string human_span(int64_t nanos);
// "<span> ago" for the past, "<span> from now" for the future, "Forever" beyond 20 years.
std::string human_time(int64_t unix_nanos, int64_t now_unix_nanos);
// Go's time.Duration.String(): "0s", "1.5µs", "312.5ms", "2.000001s", "1h2m3s".
std::string go_duration(int64_t nanos);
// The progress bar's ETA: "59m59s", "1h2m", "12s".
std::string short_duration(int64_t seconds);
// RFC 3339 ("2024-05-01T12:00:00.5+02:00", "...Z") -> Unix nanoseconds.
std::optional<int64_t> parse_rfc3339(std::string_view s);
// The PROCESSOR column of `ps`: "100% GPU", "100% CPU", "48%/52% CPU/GPU", "Unknown".
std::string processor_text(int64_t size, int64_t size_vram);
// api.Metrics.Summary() for a final generate/chat chunk ("total duration:       1.2s\n"...).
std::string metrics_summary(const nlohmann::json& final_chunk);
// Left-aligned columns, each cell padded to its column's width plus four spaces (Ollama's
// tablewriter settings); the first row is the header.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace paddock::cli::ui
