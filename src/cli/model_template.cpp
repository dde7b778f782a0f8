#include "cli/model_template.h"

#include <filesystem>

#include "chat/render.h"
#include "gguf/gguf.h"
#include "store/name.h"
#include "store/store.h"

namespace paddock::cli {

namespace {

Result<ModelTemplate> gguf_template(const std::string& path) {
  PADDOCK_ASSIGN(auto file, gguf::File::open(path));
  ModelTemplate mt;
  if (auto jinja = file->get_string("tokenizer.chat_template")) {
    mt.text = std::string(*jinja);
    mt.bos_token = gguf::token_text(*file, "tokenizer.ggml.bos_token_id");
    mt.eos_token = gguf::token_text(*file, "tokenizer.ggml.eos_token_id");
    return mt;
  }
  mt.is_go = true;
  mt.text = chat::kDefaultGoTemplate;
  return mt;
}

}  // namespace

Result<ModelTemplate> model_template(const std::string& model) {
  if (std::filesystem::is_regular_file(model)) return gguf_template(model);
  PADDOCK_ASSIGN(store::Name name, store::Name::parse(model));
  PADDOCK_ASSIGN(store::Store st, store::Store::open(store::Store::default_root()));
  PADDOCK_ASSIGN(store::ModelInfo info, st.show(name));
  if (info.template_text) {
    ModelTemplate mt;
    mt.is_go = true;
    mt.text = *info.template_text;
    return mt;
  }
  if (info.model_path.empty()) return not_found("model '" + model + "' has no model layer");
  return gguf_template(info.model_path);
}

}  // namespace paddock::cli
