#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>

#include "server/fake_runner_test.h"
#include "store/manifest.h"

namespace paddock::server::testing {

namespace {

store::Layer layer(store::Store& s, std::string_view media, std::string_view bytes) {
  auto d = s.import_blob_bytes(bytes);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return store::Layer{std::string(media), *d, bytes.size(), "", ""};
}

void add_model(store::Store& s, const char* name, const char* tmpl, const char* system) {
  store::ModelConfig c;
  c.model_format = "gguf";
  c.model_family = "llama";
  c.model_type = "1K";
  c.file_type = "F32";
  c.architecture = "amd64";
  c.os = "linux";
  store::Manifest m;
  m.config = layer(s, store::kMediaConfig, c.to_json());
  m.layers.push_back(layer(s, store::kMediaModel, "not really a gguf"));
  m.layers.push_back(layer(s, store::kMediaTemplate, tmpl));
  if (*system) m.layers.push_back(layer(s, store::kMediaSystem, system));
  m.layers.push_back(layer(s, store::kMediaParams, "{\"temperature\":0.5}\n"));
  auto n = store::Name::parse(name);
  ASSERT_TRUE(n.ok());
  const Status st = s.write_manifest(*n, m);
  ASSERT_TRUE(st.is_ok()) << st.message();
}

}  // namespace

FakeStore::FakeStore() {
  static std::atomic<int> counter{0};
  root_ = (std::filesystem::temp_directory_path() /
           ("paddock-server-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
              .string();
  auto s = store::Store::open(root_);
  EXPECT_TRUE(s.ok());
  add_model(*s, "tiny",
            "{{ if .System }}<s>{{ .System }}</s>{{ end }}<u>{{ .Prompt }}</u>{{ if .Suffix }}<x>{{ .Suffix "
            "}}</x>{{ end }}",
            "be nice");
  add_model(*s, "thinker",
            "{{- range .Messages }}<{{ .Role }}>{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}"
            "{{ .Content }}{{ if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{{ json .Function }}{{ end }}"
            "</tool_call>{{ end }}{{ end }}{{ if .Tools }}{{ json .Tools }}{{ end }}<assistant>",
            "");
}

FakeStore::~FakeStore() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

store::Store FakeStore::open() const {
  auto s = store::Store::open(root_);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

}  // namespace paddock::server::testing
