#include "store/create.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "base/sha256.h"
#include "gguf/gguf.h"
#include "gguf/summary.h"
#include "store/fs_util.h"

namespace paddock::store {
namespace {

bool is_text_layer(std::string_view t) {
  return t == kMediaTemplate || t == kMediaPrompt || t == kMediaSystem || t == kMediaParams ||
         t == kMediaMessages || t == kMediaLicense;
}

std::string expand_path(const std::string& p, const std::string& base_dir) {
  if (!p.empty() && p[0] == '/') return p;
  if (p == "~" || p.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + p.substr(1);
  }
  return (base_dir.empty() ? "." : base_dir) + "/" + p;
}

Result<bool> has_gguf_magic(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return io_error(path + ": cannot open");
  unsigned char m[4] = {};
  const size_t n = std::fread(m, 1, 4, f);
  std::fclose(f);
  return n == 4 && m[0] == 'G' && m[1] == 'G' && m[2] == 'U' && m[3] == 'F';
}

// What the config needs from a GGUF, and which kind of layer it is.
struct GgufFacts {
  std::string media_type{kMediaModel};
  std::string architecture;
  std::string file_type;
  uint64_t parameters = 0;
};

Result<GgufFacts> read_gguf_facts(const std::string& path) {
  PADDOCK_ASSIGN(bool magic, has_gguf_magic(path));
  if (!magic) return invalid_argument(path + ": supplied file was not in GGUF format");
  auto file = gguf::File::open(path);
  if (!file) return file.status().with_context(path);
  const gguf::File& f = **file;
  const gguf::ModelSummary s = gguf::summarize(f);
  GgufFacts facts;
  facts.architecture = s.architecture.value_or("");
  facts.file_type = s.file_type ? *s.file_type : s.quantization;
  facts.parameters = s.parameters;
  const std::string type(f.get_string("general.type").value_or(""));
  if (type == "adapter") {
    facts.media_type = kMediaAdapter;
  } else if (type == "mmproj" || type == "projector" || facts.architecture == "clip") {
    facts.media_type = kMediaProjector;
  }
  return facts;
}

class Creator {
 public:
  Creator(Store& store, const Name& name, const Modelfile& mf, const CreateOptions& opts)
      : store_(store), name_(name), mf_(mf), opts_(opts) {}

  Status run() {
    if (name_.digest())
      return invalid_argument("invalid model name: a model to create cannot carry a digest");
    if (auto existing = store_.resolve(name_); existing) {
      name_ = existing.value();  // keep the casing already on disk, as Ollama does
      if (auto old = store_.read_manifest(name_); old) old_digests_ = old->digests();
    }
    std::vector<Digest> written;
    {
      PADDOCK_ASSIGN(Store::Lock held, store_.lock(false));
      PADDOCK_TRY(base_layers());
      for (const auto& a : mf_.adapters) PADDOCK_TRY(add_file_layer(expand_path(a, opts_.base_dir), true));
      PADDOCK_TRY(quantize());
      PADDOCK_TRY(text_layers());
      PADDOCK_TRY(config_layer());
      progress("writing manifest");
      PADDOCK_TRY(store_.write_manifest(name_, manifest_));
      written = manifest_.digests();
    }
    // The blobs of the manifest this one replaced, if nothing else uses them any more.
    std::vector<Digest> stale;
    for (const Digest& d : old_digests_)
      if (std::find(written.begin(), written.end(), d) == written.end()) stale.push_back(d);
    if (!stale.empty()) PADDOCK_TRY(store_.remove_unreferenced(stale));
    progress("success");
    return Status::ok();
  }

 private:
  void progress(std::string status) const {
    if (opts_.on_progress) opts_.on_progress(CreateProgress{std::move(status), "", 0, 0});
  }

  // Imports bytes as a blob, reporting whether it was already there.
  Result<Layer> blob_layer(std::string_view media_type, std::string_view bytes) {
    const std::string hex = sha256_hex(bytes);
    PADDOCK_ASSIGN(Digest d, Digest::from_hex(hex));
    const bool existed = store_.has_blob(d);
    PADDOCK_ASSIGN(Digest got, store_.import_blob_bytes(bytes));
    progress((existed ? "using existing layer " : "creating new layer ") + got.str());
    return Layer{std::string(media_type), got, bytes.size(), "", ""};
  }

  Status add_file_layer(const std::string& path, bool adapter) {
    PADDOCK_ASSIGN(GgufFacts facts, read_gguf_facts(path));
    if (adapter) facts.media_type = kMediaAdapter;
    PADDOCK_ASSIGN(std::string hex, sha256_file_hex(path));
    PADDOCK_ASSIGN(Digest d, Digest::from_hex(hex));
    const bool existed = store_.has_blob(d);
    PADDOCK_ASSIGN(Digest got, store_.import_blob_file(path, d));
    PADDOCK_ASSIGN(FileStat st, stat_file(store_.blob_path(got)));
    progress((existed ? "using existing layer " : "creating new layer ") + got.str());
    if (facts.media_type == kMediaModel) model_facts_ = facts;
    if (facts.media_type == kMediaProjector) has_projector_ = true;
    layers_.push_back(Layer{facts.media_type, got, st.size, "", ""});
    return Status::ok();
  }

  Status from_blob(const Digest& d) {
    const std::string path = store_.blob_path(d);
    PADDOCK_ASSIGN(FileStat st, stat_file(path));
    PADDOCK_ASSIGN(GgufFacts facts, read_gguf_facts(path));
    progress("using existing layer " + d.str());
    if (facts.media_type == kMediaModel) model_facts_ = facts;
    layers_.push_back(Layer{facts.media_type, d, st.size, "", ""});
    return Status::ok();
  }

  Status from_model(const Name& base) {
    PADDOCK_ASSIGN(ModelInfo info, store_.show(base));
    const std::string from = info.name.display_shortest();
    for (Layer l : info.manifest.layers) {
      l.from = from;
      layers_.push_back(std::move(l));
    }
    base_config_ = info.config;
    base_params_ = info.params;
    if (!info.model_path.empty()) {
      if (auto facts = read_gguf_facts(info.model_path); facts) model_facts_ = std::move(facts).value();
    }
    return Status::ok();
  }

  Status base_layers() {
    for (const std::string& arg : mf_.from) {
      const std::string path = expand_path(arg, opts_.base_dir);
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
          return unsupported("FROM " + arg +
                             ": importing a directory (safetensors) is not supported; FROM a GGUF file");
        PADDOCK_TRY(add_file_layer(path, false));
      } else if (Digest::is_valid(arg)) {
        PADDOCK_ASSIGN(Digest d, Digest::parse(arg));
        if (!store_.has_blob(d)) return not_found("FROM " + arg + ": blob not found in the store");
        PADDOCK_TRY(from_blob(d));
      } else {
        auto base = Name::parse(arg);
        if (!base) {
          return not_found("FROM " + arg + ": no such file, and not a model name (" +
                           base.status().message() + ")");
        }
        auto resolved = store_.resolve(base.value());
        if (!resolved)
          return not_found("model \"" + arg + "\" not found (FROM is neither a file nor a local model)");
        PADDOCK_TRY(from_model(resolved.value()));
      }
    }
    if (!model_facts_) {
      for (const Layer& l : layers_)
        if (l.media_type == kMediaModel) return Status::ok();
      return invalid_argument("FROM gives no model weights (no GGUF model layer)");
    }
    return Status::ok();
  }

  Status quantize() {
    if (opts_.quantize.empty()) return Status::ok();
    if (!opts_.quantizer)
      return unsupported("quantize " + opts_.quantize +
                         ": this build has no quantizer (it comes with the CPU backend)");
    auto model = std::find_if(layers_.begin(), layers_.end(),
                              [](const Layer& l) { return l.media_type == kMediaModel; });
    if (model == layers_.end() || !model_facts_)
      return invalid_argument("quantize: there is no GGUF model layer");
    const std::string& ft = model_facts_->file_type;
    if (ft != "F16" && ft != "BF16" && ft != "F32")
      return invalid_argument("quantization is only supported for F16, BF16 and F32 models, found " + ft);
    std::string target = opts_.quantize;
    for (char& c : target) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    progress("quantizing " + ft + " model to " + target);
    const std::string tmp = store_.temp_path();
    Status q = opts_.quantizer(store_.blob_path(model->digest), target, tmp, opts_.on_progress);
    if (q) {
      auto facts = read_gguf_facts(tmp);
      auto d = facts ? store_.import_blob_file(tmp) : Result<Digest>(facts.status());
      if (d) {
        progress("creating new layer " + d->str());
        model_facts_ = std::move(facts).value();
        auto st = stat_file(store_.blob_path(*d));
        *model = Layer{std::string(kMediaModel), *d, st ? st->size : 0, "", ""};
      } else {
        q = d.status();
      }
    }
    std::remove(tmp.c_str());
    return q;
  }

  Status text_layers() {
    // Keep the base's weights (and anything else that is not text) in their order, then the
    // text layers in the order Ollama's own models have them.
    std::vector<Layer> tmpl, system, params, messages, licenses;
    std::vector<Layer> out;
    for (Layer& l : layers_) {
      const std::string_view t = l.media_type;
      if (!is_text_layer(t)) {
        out.push_back(std::move(l));
      } else if (t == kMediaTemplate || t == kMediaPrompt) {
        tmpl.push_back(std::move(l));
      } else if (t == kMediaSystem) {
        system.push_back(std::move(l));
      } else if (t == kMediaParams) {
        params.push_back(std::move(l));
      } else if (t == kMediaMessages) {
        messages.push_back(std::move(l));
      } else {
        licenses.push_back(std::move(l));
      }
    }
    if (mf_.template_text && !mf_.template_text->empty()) {
      PADDOCK_ASSIGN(Layer l, blob_layer(kMediaTemplate, *mf_.template_text));
      tmpl = {l};
    }
    if (mf_.system && !mf_.system->empty()) {
      PADDOCK_ASSIGN(Layer l, blob_layer(kMediaSystem, *mf_.system));
      system = {l};
    }
    if (!mf_.params.empty()) {
      Params merged = base_params_;
      merged.merge_from(mf_.params);
      PADDOCK_ASSIGN(Layer l, blob_layer(kMediaParams, merged.to_json()));
      params = {l};
    }
    if (!mf_.messages.empty()) {
      PADDOCK_ASSIGN(Layer l, blob_layer(kMediaMessages, messages_to_json(mf_.messages)));
      messages = {l};
    }
    for (const std::string& text : mf_.licenses) {
      PADDOCK_ASSIGN(Layer l, blob_layer(kMediaLicense, text));
      licenses.push_back(l);
    }
    for (auto* group : {&tmpl, &system, &params, &messages, &licenses})
      for (Layer& l : *group) out.push_back(std::move(l));
    manifest_.layers = std::move(out);
    return Status::ok();
  }

  Status config_layer() {
    ModelConfig c = base_config_;
    c.model_format = "gguf";
    if (model_facts_) {
      c.model_family = model_facts_->architecture;
      c.model_families = {model_facts_->architecture};
      if (has_projector_) c.model_families.push_back("clip");
      c.model_type = parameter_count_label(model_facts_->parameters);
      c.file_type = model_facts_->file_type;
    }
    if (!mf_.requires_version.empty()) c.requires_version = mf_.requires_version;
    if (!mf_.renderer.empty()) c.renderer = mf_.renderer;
    if (!mf_.parser.empty()) c.parser = mf_.parser;
    c.architecture = go_arch();
    c.os = go_os();
    const std::string json = c.to_json();
    PADDOCK_ASSIGN(Layer l, blob_layer(kMediaConfig, json));
    manifest_.config = l;
    return Status::ok();
  }

  Store& store_;
  Name name_;
  const Modelfile& mf_;
  const CreateOptions& opts_;
  std::vector<Layer> layers_;
  std::optional<GgufFacts> model_facts_;
  bool has_projector_ = false;
  ModelConfig base_config_;
  Params base_params_;
  Manifest manifest_;
  std::vector<Digest> old_digests_;
};

}  // namespace

std::string parameter_count_label(uint64_t n) {
  const auto fmt = [](double v, int decimals, const char* unit) {
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%.*f%s", decimals, v, unit);
    return std::string(buf);
  };
  const double v = static_cast<double>(n);
  if (n >= 1000000000000ULL) return fmt(v / 1e12, 2, "T");
  if (n >= 1000000000ULL) return fmt(v / 1e9, 2, "B");
  if (n >= 1000000ULL) return fmt(v / 1e6, 2, "M");
  if (n >= 1000ULL) return fmt(v / 1e3, 2, "K");
  return std::to_string(n);
}

Status create_model(Store& store, const Name& name, std::string_view modelfile_text,
                    const CreateOptions& opts) {
  if (opts.on_progress) opts.on_progress(CreateProgress{"parsing modelfile", "", 0, 0});
  PADDOCK_ASSIGN(Modelfile mf, parse_modelfile(modelfile_text));
  return create_model(store, name, mf, opts);
}

Status create_model(Store& store, const Name& name, const Modelfile& mf, const CreateOptions& opts) {
  return Creator(store, name, mf, opts).run();
}

}  // namespace paddock::store
