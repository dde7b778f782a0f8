#include "server/prompt.h"

#include "chat/harmony_parser.h"
#include "chat/render.h"
#include "chat/thinking_parser.h"
#include "chat/tool_parser.h"
#include "gguf/gguf.h"

namespace paddock::server {

namespace {

Result<PromptTemplate> from_go(std::string_view text) {
  auto parsed = chat::GoTemplate::parse(text);
  if (!parsed.ok()) return invalid_argument("template error: " + parsed.status().message());
  PromptTemplate t;
  t.text = std::string(text);
  t.go = std::make_shared<const chat::GoTemplate>(std::move(parsed).value());
  t.supports_insert = t.go->uses_var("suffix");
  t.supports_tools = t.go->uses_var("tools");
  t.tool_tag = chat::ToolCallParser::infer_tag(*t.go);
  t.think_tags = chat::ThinkingParser::infer_tags(*t.go);
  t.harmony = chat::HarmonyParser::is_harmony(text);
  return t;
}

}  // namespace

Result<PromptTemplate> choose_template(const std::optional<std::string>& override_text,
                                       const std::optional<std::string>& model_template,
                                       const std::string& gguf_path) {
  if (override_text && !override_text->empty()) return from_go(*override_text);
  if (model_template) return from_go(*model_template);
  if (!gguf_path.empty()) {
    auto file = gguf::File::open(gguf_path);
    if (file.ok()) {
      if (auto source = (*file)->get_string("tokenizer.chat_template")) {
        auto parsed = jinja::Template::parse(*source);
        if (!parsed.ok()) return invalid_argument("template error: " + parsed.status().message());
        PromptTemplate t;
        t.text = std::string(*source);
        t.jinja = std::make_shared<const jinja::Template>(std::move(parsed).value());
        t.bos_token = gguf::token_text(**file, "tokenizer.ggml.bos_token_id");
        t.eos_token = gguf::token_text(**file, "tokenizer.ggml.eos_token_id");
        t.supports_tools = source->find("tools") != std::string_view::npos;
        if (source->find("<think>") != std::string_view::npos) t.think_tags = {"<think>", "</think>"};
        t.harmony = chat::HarmonyParser::is_harmony(*source);
        return t;
      }
    }
  }
  return from_go(chat::kDefaultGoTemplate);
}

Result<std::string> render_messages(const PromptTemplate& t, const std::vector<chat::Message>& messages,
                                    const std::vector<chat::Tool>& tools, const Think& think) {
  // gpt-oss knows no effort above "high"; Ollama maps "max" to it.
  const std::string level = t.harmony && think.level == "max" ? "high" : think.level;
  if (t.go) {
    chat::RenderOptions o;
    o.think = think.set ? think.enabled : t.supports_thinking();
    o.is_think_set = think.set;
    o.think_level = level;
    return chat::render_chat(*t.go, messages, tools, o);
  }
  Json ctx = Json::object();
  Json msgs = Json::array();
  for (const chat::Message& m : messages) msgs.push_back(chat::to_json(m));
  ctx["messages"] = std::move(msgs);
  if (!tools.empty()) {
    Json list = Json::array();
    for (const chat::Tool& tool : tools) {
      Json fn = {{"name", tool.name}, {"description", tool.description}, {"parameters", tool.parameters}};
      list.push_back(Json{{"type", tool.type}, {"function", std::move(fn)}});
    }
    ctx["tools"] = std::move(list);
  }
  ctx["add_generation_prompt"] = true;
  ctx["bos_token"] = t.bos_token;
  ctx["eos_token"] = t.eos_token;
  if (think.set) ctx["enable_thinking"] = think.enabled;
  // Ollama passes a `think` level as the template's reasoning_effort (gpt-oss reads it;
  // without one its template says "medium").
  if (!level.empty()) ctx["reasoning_effort"] = level;
  auto out = t.jinja->render(ctx);
  if (!out.ok()) return invalid_argument("template error: " + out.status().message());
  return out;
}

Result<std::string> render_generate(const PromptTemplate& t, const std::string& system,
                                    const std::string& prompt, const std::string& suffix,
                                    const Think& think) {
  if (!suffix.empty()) {
    if (!t.supports_insert) return invalid_argument("does not support insert");
    const chat::Value data = chat::Value::object(chat::Value::Flavor::kStruct,
                                                 {chat::field("System", "system", chat::Value(system)),
                                                  chat::field("Prompt", "prompt", chat::Value(prompt)),
                                                  chat::field("Suffix", "suffix", chat::Value(suffix)),
                                                  chat::field("Response", "response", chat::Value(""))});
    return t.go->execute(data);
  }
  std::vector<chat::Message> msgs;
  if (!system.empty()) msgs.push_back(chat::Message{.role = "system", .content = system});
  msgs.push_back(chat::Message{.role = "user", .content = prompt});
  return render_messages(t, msgs, {}, think);
}

}  // namespace paddock::server
