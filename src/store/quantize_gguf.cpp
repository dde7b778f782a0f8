#include "store/quantize_gguf.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "base/checked_math.h"
#include "base/threadpool.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/quant.h"

namespace paddock::store {
namespace {

// The order supported types are listed in; every row must be writable by plan_mix.
constexpr FileType kSupported[] = {
    FileType::kAllF32, FileType::kF16,    FileType::kBF16,   FileType::kQ4_0,      FileType::kQ4_1,
    FileType::kQ5_0,   FileType::kQ5_1,   FileType::kQ8_0,   FileType::kQ2_K,      FileType::kQ2_K_S,
    FileType::kQ3_K_S, FileType::kQ3_K_M, FileType::kQ3_K_L, FileType::kQ4_K_S,    FileType::kQ4_K_M,
    FileType::kQ5_K_S, FileType::kQ5_K_M, FileType::kQ6_K,   FileType::kMXFP4_MOE,
};

constexpr uint32_t kQuantizationVersion = 2;  // GGML_QNT_VERSION
// Ollama's progress lines for quantization carry this placeholder digest.
constexpr const char* kProgressDigest = "0000000000000000000";
// Rows are converted and quantized this many source elements at a time.
constexpr int64_t kChunkElements = int64_t{1} << 22;
constexpr int kThreads = 2;

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

// Bytes of one metadata value's payload as GGUF stores it (after the type tag).
uint64_t payload_bytes(gguf::ValueType type, const gguf::Value& v) {
  if (type == gguf::ValueType::kString) return 8 + v.s.size();
  if (type != gguf::ValueType::kArray) return gguf::scalar_bytes(type);
  uint64_t n = 4 + 8;
  for (const gguf::Value& item : v.items) n += payload_bytes(v.elem_type, item);
  return n;
}

// The header the Writer emits for metadata only, without its trailing padding: magic,
// version, counts and key-values. Tensor infos follow it.
uint64_t metadata_bytes(const gguf::Writer& w) {
  uint64_t n = 4 + 4 + 8 + 8;
  for (const gguf::KeyValue& kv : w.metadata())
    n += 8 + kv.key.size() + 4 + payload_bytes(kv.value.type, kv.value);
  return n;
}

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

struct Planned {
  const gguf::TensorInfo* src;
  DType type;
  uint64_t n_bytes;
  uint64_t offset;
};

// A FILE* that is closed (and its temp file removed) unless committed.
class OutFile {
 public:
  explicit OutFile(std::string path) : path_(std::move(path)) {}
  ~OutFile() {
    if (f_ != nullptr) std::fclose(f_);
    if (!committed_) std::remove(path_.c_str());
  }
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;

  Status open() {
    f_ = std::fopen(path_.c_str(), "wb");
    return f_ ? Status::ok() : io_error(path_ + ": " + std::strerror(errno));
  }
  Status write(const void* data, size_t n) {
    if (n != 0 && std::fwrite(data, 1, n, f_) != n)
      return io_error(path_ + ": write failed: " + std::strerror(errno));
    return Status::ok();
  }
  Status pad(uint64_t n) {
    static constexpr uint8_t kZeros[64] = {};
    while (n > 0) {
      const size_t step = static_cast<size_t>(std::min<uint64_t>(n, sizeof(kZeros)));
      PADDOCK_TRY(write(kZeros, step));
      n -= step;
    }
    return Status::ok();
  }
  // Flushes, syncs and renames over dst.
  Status commit(const std::string& dst) {
    const bool failed = std::fflush(f_) != 0 || ::fsync(::fileno(f_)) != 0;
    const int saved = errno;
    const bool close_failed = std::fclose(f_) != 0;
    f_ = nullptr;
    if (failed || close_failed) return io_error(path_ + ": write failed: " + std::strerror(saved));
    if (std::rename(path_.c_str(), dst.c_str()) != 0)
      return io_error(dst + ": rename failed: " + std::strerror(errno));
    committed_ = true;
    return Status::ok();
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  bool committed_ = false;
};

// The source's file type name for messages: general.file_type when it names a float type,
// else the float type holding most elements of the weights.
Result<std::string> source_type_name(const gguf::File& f) {
  uint64_t elements[3] = {};  // F32, F16, BF16
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (!is_float(t.type)) {
      return invalid_argument("quantization is only supported for F16, BF16 and F32 models (tensor " +
                              std::string(t.name) + " is " + std::string(dtype_name(t.type)) + ")");
    }
    if (t.ne.size() >= 2) elements[t.type == DType::kF32 ? 0 : t.type == DType::kF16 ? 1 : 2] += t.n_elements;
  }
  if (auto id = f.get_int("general.file_type")) {
    if (*id == static_cast<int64_t>(FileType::kAllF32)) return std::string("F32");
    if (*id == static_cast<int64_t>(FileType::kF16)) return std::string("F16");
    if (*id == static_cast<int64_t>(FileType::kBF16)) return std::string("BF16");
  }
  const int most = static_cast<int>(std::max_element(elements, elements + 3) - elements);
  return std::string(most == 0 ? "F32" : most == 1 ? "F16" : "BF16");
}

MixModel mix_model(const gguf::File& f, std::string_view arch) {
  const std::string a(arch);
  MixModel m;
  m.arch = arch;
  m.n_layer = static_cast<int>(f.get_int(a + ".block_count").value_or(0));
  m.n_head = static_cast<int>(f.get_int(a + ".attention.head_count").value_or(1));
  m.n_head_kv = static_cast<int>(f.get_int(a + ".attention.head_count_kv").value_or(m.n_head));
  m.n_expert = static_cast<int>(f.get_int(a + ".expert_count").value_or(0));
  // llama.cpp's LLM_TYPE_70B: an 80-layer llama with grouped-query attention (without it,
  // LLM_TYPE_65B) or an 80-layer qwen2 (Qwen2-72B).
  m.is_70b = m.n_layer == 80 && ((arch == "llama" && m.n_head != m.n_head_kv) || arch == "qwen2");
  return m;
}

// llama-quantize writes tensors in its weight_name_comparer order: by layer number (tensors
// outside blk.N come first), then by name. Keeping it makes our files byte-identical.
std::vector<size_t> write_order(const gguf::File& f) {
  const auto layer = [](std::string_view name) {
    int n = -1;
    if (name.starts_with("blk.")) {
      const std::string_view rest = name.substr(4);
      const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
      if (ec != std::errc() || end == rest.data() + rest.size() || *end != '.') n = -1;
    }
    return n;
  };
  std::vector<size_t> order(f.tensors().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const std::string_view na = f.tensors()[a].name, nb = f.tensors()[b].name;
    const int la = layer(na), lb = layer(nb);
    return la != lb ? la < lb : na < nb;
  });
  return order;
}

Result<std::vector<Planned>> plan(const gguf::File& f, FileType ftype, uint64_t alignment) {
  const std::string_view arch = f.get_string("general.architecture").value_or("llama");
  std::vector<MixTensor> mix;
  mix.reserve(f.tensors().size());
  for (const gguf::TensorInfo& t : f.tensors())
    mix.push_back({t.name, t.type, static_cast<int>(t.ne.size()), t.ne[0], t.ne.size() > 2 ? t.ne[2] : 1});
  const std::vector<DType> types = plan_mix(ftype, mix, mix_model(f, arch));
  std::vector<Planned> out;
  uint64_t offset = 0;
  for (const size_t i : write_order(f)) {
    const gguf::TensorInfo& t = f.tensors()[i];
    const DType type = types[i];
    const QuantOps* ops = quant_ops(type);
    if (ops == nullptr || ops->quantize_row == nullptr)
      return internal_error("tensor " + std::string(t.name) + ": no quantizer for " +
                            std::string(dtype_name(type)));
    if (t.ne[0] % dtype_info(type).block_size != 0) {
      // llama-quantize refuses these too ("Unsupported tensor size encountered").
      return invalid_argument(
          "tensor " + std::string(t.name) + ": rows of " + std::to_string(t.ne[0]) +
          " values are not a multiple of " + std::string(dtype_name(type)) + "'s block of " +
          std::to_string(dtype_info(type).block_size) + ", so this model cannot be quantized to " +
          std::string(file_type_name(ftype).value_or("")) + "; try a K-quant mix such as Q4_K_M");
    }
    const uint64_t rows = t.n_elements / static_cast<uint64_t>(t.ne[0]);
    uint64_t n_bytes = 0, end = 0;
    if (!checked_mul<uint64_t>(dtype_row_bytes(type, t.ne[0]), rows, &n_bytes) ||
        !checked_add(offset, n_bytes, &end)) {
      return invalid_argument("tensor " + std::string(t.name) + ": too large");
    }
    out.push_back({&t, type, n_bytes, offset});
    if (!checked_align_up(end, alignment, &offset)) return invalid_argument("model too large");
  }
  return out;
}

// Header bytes: the metadata as the Writer serialises it, then the tensor infos, padded.
Result<std::vector<uint8_t>> header(const gguf::File& f, FileType ftype, const std::vector<Planned>& tensors,
                                    uint64_t alignment) {
  gguf::Writer w;
  w.copy_metadata(f);
  // llama-quantize (gguf_set_val_*) moves the keys it sets to the end, in this order.
  w.remove("general.quantization_version");
  w.remove("general.file_type");
  w.set_u32("general.quantization_version", kQuantizationVersion);
  w.set_u32("general.file_type", static_cast<uint32_t>(ftype));
  PADDOCK_ASSIGN(std::vector<uint8_t> bytes, w.write_buffer());
  const uint64_t meta = metadata_bytes(w);
  uint64_t padded = 0;
  if (!checked_align_up(meta, alignment, &padded) || padded != bytes.size())
    return internal_error("GGUF header size does not match the writer's layout");
  bytes.resize(meta);
  const uint64_t n_tensors = tensors.size();
  std::memcpy(bytes.data() + 8, &n_tensors, sizeof(n_tensors));
  for (const Planned& t : tensors) {
    append<uint64_t>(bytes, t.src->name.size());
    bytes.insert(bytes.end(), t.src->name.begin(), t.src->name.end());
    append<uint32_t>(bytes, static_cast<uint32_t>(t.src->ne.size()));
    for (const int64_t d : t.src->ne) append<uint64_t>(bytes, static_cast<uint64_t>(d));
    append<uint32_t>(bytes, static_cast<uint32_t>(t.type));
    append<uint64_t>(bytes, t.offset);
  }
  if (!checked_align_up(bytes.size(), alignment, &padded)) return invalid_argument("header too large");
  bytes.resize(padded, 0);
  return bytes;
}

// Converts and quantizes rows [row0, row0 + n_rows) of t into out.
Status quantize_rows(const Planned& t, std::span<const uint8_t> src, int64_t row0, int64_t n_rows,
                     ThreadPool& pool, std::vector<uint8_t>& out) {
  const int64_t ne0 = t.src->ne[0];
  const size_t src_row = dtype_row_bytes(t.src->type, ne0);
  const size_t dst_row = dtype_row_bytes(t.type, ne0);
  out.resize(dst_row * static_cast<size_t>(n_rows));
  const QuantOps* from = quant_ops(t.src->type);
  const QuantOps* to = quant_ops(t.type);
  std::atomic<int64_t> bad_row{-1};
  pool.parallel_for(n_rows, [&](int64_t begin, int64_t end, int) {
    std::vector<float> row(static_cast<size_t>(ne0));
    for (int64_t r = begin; r < end; ++r) {
      from->dequantize_row(src.data() + static_cast<size_t>(row0 + r) * src_row, row.data(), ne0);
      if (!std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); })) {
        bad_row.store(row0 + r);
        continue;
      }
      to->quantize_row(row.data(), out.data() + static_cast<size_t>(r) * dst_row, ne0);
    }
  });
  if (bad_row.load() >= 0) {
    return invalid_argument("tensor " + std::string(t.src->name) + ": row " + std::to_string(bad_row.load()) +
                            " holds NaN or infinity; cannot quantize it");
  }
  return Status::ok();
}

}  // namespace

Result<FileType> parse_quantize_type(std::string_view type) {
  std::string name = upper(type);
  if (name == "Q3_K" || name == "Q4_K" || name == "Q5_K") name += "_M";
  if (const auto ft = file_type_from_name(name)) {
    if (std::find(std::begin(kSupported), std::end(kSupported), *ft) != std::end(kSupported)) return *ft;
  }
  std::string msg = "unsupported quantization type " + std::string(type) + " - supported types are " +
                    supported_quantize_types();
  if (name.starts_with("IQ")) msg += " (IQ types need an importance matrix)";
  return invalid_argument(msg);
}

std::string supported_quantize_types() {
  std::string out;
  for (const FileType t : kSupported) {
    if (!out.empty()) out += ", ";
    out += file_type_name(t).value_or("?");
  }
  return out;
}

Status quantize_gguf(const std::string& src, std::string_view type, const std::string& dst,
                     const CreateProgressFn& progress) {
  PADDOCK_ASSIGN(const FileType ftype, parse_quantize_type(type));
  auto opened = gguf::File::open(src);
  if (!opened) return opened.status().with_context(src);
  const gguf::File& f = **opened;
  PADDOCK_ASSIGN(const std::string from, source_type_name(f));
  const uint64_t alignment = f.alignment();
  PADDOCK_ASSIGN(const std::vector<Planned> tensors, plan(f, ftype, alignment));
  PADDOCK_ASSIGN(const std::vector<uint8_t> head, header(f, ftype, tensors, alignment));

  const std::string status =
      "quantizing " + from + " model to " + std::string(file_type_name(ftype).value_or(""));
  uint64_t total = 0, completed = 0;
  for (const Planned& t : tensors) total += t.src->n_bytes;
  const auto report = [&] {
    if (progress) progress(CreateProgress{status, kProgressDigest, total, completed});
  };
  report();

  OutFile out(dst + ".part-" + std::to_string(::getpid()));
  PADDOCK_TRY(out.open());
  PADDOCK_TRY(out.write(head.data(), head.size()));
  ThreadPool pool(kThreads);
  std::vector<uint8_t> buffer;
  uint64_t written = 0;
  for (const Planned& t : tensors) {
    const std::span<const uint8_t> data = f.tensor_data(*t.src);
    PADDOCK_TRY(out.pad(t.offset - written));
    if (t.type == t.src->type) {
      PADDOCK_TRY(out.write(data.data(), data.size()));
      completed += data.size();
      report();
    } else {
      const int64_t ne0 = t.src->ne[0];
      const int64_t rows = static_cast<int64_t>(t.src->n_elements / static_cast<uint64_t>(ne0));
      const int64_t chunk = std::max<int64_t>(1, kChunkElements / ne0);
      for (int64_t r = 0; r < rows; r += chunk) {
        const int64_t n = std::min(chunk, rows - r);
        PADDOCK_TRY(quantize_rows(t, data, r, n, pool, buffer));
        PADDOCK_TRY(out.write(buffer.data(), buffer.size()));
        completed += static_cast<uint64_t>(n) * dtype_row_bytes(t.src->type, ne0);
        report();
      }
    }
    written = t.offset + t.n_bytes;
  }
  uint64_t end = 0;
  if (!checked_align_up(written, alignment, &end)) return invalid_argument("model too large");
  PADDOCK_TRY(out.pad(end - written));
  return out.commit(dst);
}

}  // namespace paddock::store
