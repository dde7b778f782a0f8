// libFuzzer target over File::parse. On success every accessor is exercised and every tensor's
// first and last data byte is read, so a bounds check that passed wrongly shows up under ASan.
#include <cstddef>
#include <cstdint>
#include <span>

#include "gguf/gguf.h"
#include "gguf/summary.h"

namespace {

volatile uint64_t g_sink;

void touch(const paddock::gguf::Value& v) {
  g_sink = g_sink + v.u + static_cast<uint64_t>(v.i) + v.s.size() + v.is_integer();
  if (v.as_i64()) g_sink = g_sink + static_cast<uint64_t>(*v.as_i64());
  if (v.as_u64()) g_sink = g_sink + *v.as_u64();
  if (v.as_f64()) g_sink = g_sink + (*v.as_f64() > 0);
  if (!v.s.empty()) g_sink = g_sink + static_cast<uint8_t>(v.s.back());
  for (const auto& item : v.items) touch(item);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paddock::gguf;
  auto f = File::parse(std::span<const uint8_t>(data, size));
  if (!f.ok()) return 0;
  const File& file = **f;
  for (const KeyValue& kv : file.metadata()) {
    touch(kv.value);
    g_sink = g_sink + (file.find(kv.key) == &kv.value);
    g_sink = g_sink + file.get_string(kv.key).has_value() + file.get_int(kv.key).has_value() +
             file.get_float(kv.key).has_value() + file.get_bool(kv.key).has_value() +
             (file.get_array(kv.key) != nullptr) + value_type_name(kv.value.type).size();
  }
  for (const TensorInfo& t : file.tensors()) {
    if (file.find_tensor(t.name) != &t) __builtin_trap();
    const auto bytes = file.tensor_data(t);
    if (bytes.size() != t.n_bytes) __builtin_trap();
    g_sink = g_sink + bytes.front() + bytes.back() + t.ne.size();
  }
  const ModelSummary s = summarize(file);
  g_sink = g_sink + s.parameters + s.quantization.size() + human_count(s.parameters).size();
  g_sink = g_sink + file.version() + file.alignment() + file.data_offset();
  return 0;
}
