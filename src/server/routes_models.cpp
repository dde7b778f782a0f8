// The model store routes: tags, show, create, blobs, copy, delete, ps; and name resolution.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "server/api.h"
#include "server/api_util.h"
#include "server/capabilities.h"
#include "server/inference.h"
#include "server/model_info.h"
#include "store/create.h"
#include "store/quantize_gguf.h"

namespace paddock::server {

namespace {

Json details_json(const store::ModelConfig& c, const std::string& parent) {
  Json families = Json::array();
  for (const auto& f : c.model_families) families.push_back(f);
  Json d{{"parent_model", parent},         {"format", c.model_format},
         {"family", c.model_family},       {"families", c.model_families.empty() ? Json() : families},
         {"parameter_size", c.model_type}, {"quantization_level", c.file_type}};
  if (c.context_length > 0) d["context_length"] = c.context_length;
  if (c.embedding_length > 0) d["embedding_length"] = c.embedding_length;
  return d;
}

std::string time_of(int64_t unix_ns) {
  return rfc3339_nano(Clock::time_point(std::chrono::nanoseconds(unix_ns)));
}

}  // namespace

Result<ResolvedModel> Api::resolve(const std::string& name, Missing wording) {
  auto parsed = store::Name::parse(name);
  if (!parsed.ok()) return invalid_argument("invalid model name");
  const std::string missing = wording == Missing::kTryPulling
                                  ? "model \"" + name + "\" not found, try pulling it first"
                                  : "model '" + name + "' not found";
  auto stored = store_.resolve(*parsed);
  if (!stored.ok()) return not_found(missing);
  auto info = store_.show(*stored);
  if (!info.ok()) {
    if (info.status().code() == Code::kNotFound) return not_found(missing);
    return info.status();
  }
  ResolvedModel r;
  r.info = std::move(info).value();
  r.key.name = r.info.name.display_shortest();
  r.key.digest = r.info.digest;
  r.key.family = r.info.config.model_family;
  r.key.families = r.info.config.model_families;
  r.key.format = r.info.config.model_format;
  r.key.parameter_size = r.info.config.model_type;
  r.key.quantization_level = r.info.config.file_type;
  return r;
}

HttpResponse Api::tags(const HttpRequest&, const PathParams&) {
  auto list = store_.list();
  if (!list.ok()) return error_response(500, list.status().message());
  Json models = Json::array();
  for (const store::ModelSummary& m : *list) {
    const std::string name = m.name.display_shortest();
    models.push_back(Json{{"name", name},
                          {"model", name},
                          {"modified_at", time_of(m.modified_unix_ns)},
                          {"size", m.size},
                          {"digest", m.digest},
                          {"details", details_json(m.config, "")}});
  }
  return json_response(200, Json{{"models", models}});
}

HttpResponse Api::show(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_model_request(*body);
  if (!req.ok()) return error_response(req.status());
  if (req->model.empty()) return error_response(400, "model is required");
  auto parsed = store::Name::parse(req->model);
  if (!parsed.ok()) return error_response(400, "invalid model name");
  auto model = resolve(req->model);
  if (!model.ok()) return error_response(model.status());
  const store::ModelInfo& info = model->info;
  std::string license;
  for (size_t i = 0; i < info.licenses.size(); ++i) license += (i ? "\n" : "") + info.licenses[i];
  Json out = Json::object();
  if (!license.empty()) out["license"] = license;
  out["modelfile"] = store::render_modelfile(info);
  const std::string params = store::render_parameters(info.params);
  if (!params.empty()) out["parameters"] = params;
  // The template in use: the TEMPLATE layer, else the GGUF's Jinja template, else the default.
  const auto tmpl = choose_template(std::nullopt, info.template_text, info.model_path);
  if (tmpl.ok()) {
    out["template"] = tmpl->text;
  } else if (info.template_text) {
    out["template"] = *info.template_text;
  }
  if (!info.system.empty()) out["system"] = info.system;
  out["details"] = details_json(info.config, info.parent_model);
  if (!info.messages.empty()) {
    Json msgs = Json::array();
    for (const auto& m : info.messages) msgs.push_back(Json{{"role", m.role}, {"content", m.content}});
    out["messages"] = msgs;
  }
  auto file = gguf::File::open(info.model_path, gguf::Layout::kAsStored);  // as Ollama shows its own files
  out["model_info"] = file.ok() ? model_info_json(**file, req->verbose) : Json::object();
  out["capabilities"] = model_capabilities(info, tmpl.ok() ? &*tmpl : nullptr, file.ok() ? file->get() : nullptr);
  out["modified_at"] = time_of(info.modified_unix_ns);
  return json_response(200, out);
}

HttpResponse Api::copy(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_copy(*body);
  if (!req.ok()) return error_response(req.status());
  auto src = store::Name::parse(req->source);
  if (!src.ok()) return error_response(400, "source \"" + req->source + "\" is invalid");
  auto dst = store::Name::parse(req->destination);
  if (!dst.ok()) return error_response(400, "destination \"" + req->destination + "\" is invalid");
  auto stored = store_.resolve(*src);
  if (!stored.ok()) return error_response(404, "model \"" + req->source + "\" not found");
  const Status s = store_.copy(*stored, *dst);
  if (!s.is_ok()) return error_response(s);
  return json_response(200, Json::object());
}

HttpResponse Api::remove(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_model_request(*body);
  if (!req.ok()) return error_response(req.status());
  auto name = store::Name::parse(req->model);
  if (!name.ok()) return error_response(400, "name \"" + req->model + "\" is invalid");
  auto stored = store_.resolve(*name);
  if (!stored.ok()) return error_response(404, "model '" + req->model + "' not found");
  models_.unload(stored->display_shortest());
  const Status s = store_.remove(*stored);
  if (!s.is_ok()) return error_response(s);
  return json_response(200, Json::object());
}

HttpResponse Api::ps(const HttpRequest&, const PathParams&) {
  Json models = Json::array();
  for (const RunningModel& m : models_.list()) {
    store::ModelConfig c;
    c.model_format = m.model.format;
    c.model_family = m.model.family;
    c.model_families = m.model.families;
    c.model_type = m.model.parameter_size;
    c.file_type = m.model.quantization_level;
    // "Forever" is shown by clients for anything past 20 years; Go's max time is year 2262.
    const auto expires = m.forever ? Clock::time_point(std::chrono::hours(24 * 365 * 292)) : m.expires_at;
    models.push_back(Json{{"name", m.model.name},
                          {"model", m.model.name},
                          {"size", m.size},
                          {"digest", m.model.digest},
                          {"details", details_json(c, "")},
                          {"expires_at", rfc3339_nano(expires)},
                          {"size_vram", m.size_vram},
                          {"context_length", m.context_length}});
  }
  return json_response(200, Json{{"models", models}});
}

HttpResponse Api::head_blob(const HttpRequest&, const PathParams& params) {
  auto d = store::Digest::parse(params.at("digest"));
  if (!d.ok()) return error_response(400, "invalid digest format");
  if (!store_.has_blob(*d)) return error_response(404, "blob \"" + params.at("digest") + "\" not found");
  return json_response(200, Json::object());
}

HttpResponse Api::post_blob(const HttpRequest& http, const PathParams& params) {
  auto d = store::Digest::parse(params.at("digest"));
  if (!d.ok()) return error_response(400, "invalid digest format");
  if (store_.has_blob(*d)) return json_response(200, Json::object());
  Result<store::Digest> got = store::Digest();
  if (http.body_reader) {
    // Spool the streamed body to a temp file in blobs/, then verify and move it into place.
    const std::string tmp = store_.temp_path();
    std::ofstream f(tmp, std::ios::binary);
    const Status read = http.body_reader([&](const char* data, size_t n) {
      f.write(data, static_cast<std::streamsize>(n));
      return static_cast<bool>(f);
    });
    f.close();
    if (!read.is_ok() || !f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return error_response(500, read.is_ok() ? "writing blob failed" : read.message());
    }
    got = store_.import_blob_file(tmp, *d);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
  } else {
    size_t pos = 0;
    got = store_.import_blob(
        [&](char* buf, size_t n) -> Result<size_t> {
          const size_t k = std::min(n, http.body.size() - pos);
          std::copy_n(http.body.data() + pos, k, buf);
          pos += k;
          return k;
        },
        *d);
  }
  if (!got.ok()) {
    const bool mismatch = got.status().message().find("mismatch") != std::string::npos;
    return error_response(mismatch ? 400 : 500, got.status().message());
  }
  return json_response(201, Json::object());
}

HttpResponse Api::create(const HttpRequest& http, const PathParams&) {
  auto body = parse_body(http.body);
  if (!body.ok()) return error_response(body.status());
  auto req = parse_create(*body);
  if (!req.ok()) return error_response(req.status());
  auto name = store::Name::parse(req->model);
  if (!name.ok()) return error_response(400, "invalid model name");
  store::Modelfile mf;
  if (!req->from.empty()) {
    // Only a stored model may be the base: a client must not make the server read any path.
    auto base = store::Name::parse(req->from);
    if (!base.ok()) return error_response(400, "invalid model name: \"" + req->from + "\"");
    if (!store_.resolve(*base).ok()) return error_response(404, "model \"" + req->from + "\" not found");
    mf.from.push_back(req->from);
  } else if (!req->files.empty()) {
    for (const auto& [file, digest] : req->files) {
      if (file.empty() || file[0] == '/' || file.find("..") != std::string::npos) {
        return error_response(400, "file path must be relative");
      }
      auto d = store::Digest::parse(digest);
      if (!d.ok()) return error_response(400, "invalid digest format");
      if (!store_.has_blob(*d)) return error_response(400, "blob \"" + digest + "\" not found");
      mf.from.push_back(d->str());
    }
  } else {
    return error_response(400, "neither 'from' or 'files' was specified");
  }
  for (const auto& [file, digest] : req->adapters) {
    auto d = store::Digest::parse(digest);
    if (!d.ok()) return error_response(400, "invalid digest format");
    mf.adapters.push_back(d->str());
  }
  if (req->has_template) mf.template_text = req->template_text;
  if (req->has_system) mf.system = req->system;
  mf.licenses = req->license;
  if (!req->parameters.empty()) {
    auto params = store::Params::from_json(req->parameters.dump());
    if (!params.ok()) return error_response(400, params.status().message());
    mf.params = std::move(params).value();
  }
  if (!req->messages.empty()) {
    auto msgs = store::messages_from_json(req->messages.dump());
    if (!msgs.ok()) return error_response(400, msgs.status().message());
    mf.messages = std::move(msgs).value();
  }
  const std::string quantize = req->quantize;
  if (!quantize.empty()) {
    if (auto type = store::parse_quantize_type(quantize); !type.ok())
      return error_response(400, type.status().message());
  }

  auto run = [this, n = *name, mf, quantize](const SendFn& send) -> Status {
    store::CreateOptions opts;
    opts.base_dir = store_.root();
    opts.quantize = quantize;
    opts.quantizer = store::quantize_gguf;
    opts.on_progress = [&](const store::CreateProgress& p) {
      Json j{{"status", p.status}};
      if (!p.digest.empty()) j["digest"] = p.digest;
      if (p.total) {
        j["total"] = p.total;
        j["completed"] = p.completed;
      }
      send(j);
    };
    const Status created = store::create_model(store_, n, mf, opts);
    // The files come from the client: a malformed GGUF is its mistake (400), not ours (500).
    if (created.code() == Code::kCorrupt) return invalid_argument(created.message());
    PADDOCK_TRY(created);
    send(Json{{"status", "success"}});
    return Status::ok();
  };
  return progress_response(req->stream, run, http);
}

}  // namespace paddock::server
