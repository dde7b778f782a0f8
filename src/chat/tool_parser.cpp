#include "chat/tool_parser.h"

#include <algorithm>
#include <random>

#include "base/json_depth.h"

namespace paddock::chat {

namespace {

using json = nlohmann::ordered_json;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

size_t partial_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// End (exclusive) of the balanced JSON object starting at s[0] == '{', or npos if incomplete.
size_t object_end(std::string_view s) {
  int depth = 0;
  bool in_str = false, esc = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"')
      in_str = true;
    else if (c == '{')
      ++depth;
    else if (c == '}' && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

bool mentions_tool_calls(const Node& n) {
  if (std::find(n.idents.begin(), n.idents.end(), "ToolCalls") != n.idents.end()) return true;
  for (const NodePtr& c : n.nodes)
    if (mentions_tool_calls(*c)) return true;
  return n.pipe && mentions_tool_calls(*n.pipe);
}

const Node* first_text(const Node& n) {
  if (n.kind == NodeKind::kText) {
    for (char c : n.text)
      if (!is_ws(c)) return &n;
    return nullptr;
  }
  for (const NodePtr& c : n.nodes)
    if (const Node* t = first_text(*c)) return t;
  for (const NodePtr* p : {&n.list, &n.else_list})
    if (*p)
      if (const Node* t = first_text(**p)) return t;
  return nullptr;
}

const Node* first_tool_calls_if(const Node& n) {
  if (n.kind == NodeKind::kIf && n.pipe && mentions_tool_calls(*n.pipe)) return &n;
  for (const NodePtr& c : n.nodes)
    if (const Node* r = first_tool_calls_if(*c)) return r;
  for (const NodePtr* p : {&n.list, &n.else_list})
    if (*p)
      if (const Node* r = first_tool_calls_if(**p)) return r;
  return nullptr;
}

}  // namespace

std::string random_tool_call_id() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id = "call_";
  for (int i = 0; i < 8; ++i) id += kAlphabet[pick(rng)];
  return id;
}

ToolCallParser::ToolCallParser(std::string tag, std::vector<std::string> tool_names, IdGenerator make_id)
    : tag_(tag.empty() ? "{" : std::move(tag)), names_(std::move(tool_names)), make_id_(std::move(make_id)) {
  if (!make_id_) make_id_ = random_tool_call_id;
}

bool ToolCallParser::accept(const json& obj, Output* out) {
  auto known = [&](const std::string& n) {
    return !n.empty() && (names_.empty() || std::find(names_.begin(), names_.end(), n) != names_.end());
  };
  auto args_of = [](const json& a) -> json {
    if (a.is_object()) return a;
    if (a.is_string() && !json_too_deep(a.get_ref<const std::string&>())) {
      json p = json::parse(a.get<std::string>(), nullptr, false);
      if (p.is_object()) return p;
    }
    return json::object();
  };
  if (!obj.is_object()) return false;
  std::string name;
  json args = json::object();
  if (auto it = obj.find("name"); it != obj.end() && it->is_string() && known(it->get<std::string>())) {
    name = it->get<std::string>();
    if (auto a = obj.find("arguments"); a != obj.end())
      args = args_of(*a);
    else if (auto p = obj.find("parameters"); p != obj.end())
      args = args_of(*p);
  } else {
    for (const auto& [k, v] : obj.items()) {
      if (!names_.empty() && known(k) && v.is_object()) {
        name = k;
        args = v;
        break;
      }
    }
    if (name.empty()) {
      for (const auto& [k, v] : obj.items())
        if (v.is_object() && accept(v, out)) return true;
      return false;
    }
  }
  ToolCall c;
  c.id = make_id_();
  c.index = calls_++;
  c.name = std::move(name);
  c.arguments = std::move(args);
  out->calls.push_back(std::move(c));
  return true;
}

void ToolCallParser::scan(Output* out) {
  while (!closed_) {
    size_t start = 0;
    while (start < buf_.size() && buf_[start] != '{') {
      if (tag_ == "[" && buf_[start] == ']') {
        closed_ = true;
        buf_.erase(0, start + 1);
        state_ = State::kContent;
        out->content += buf_;
        buf_.clear();
        return;
      }
      ++start;
    }
    if (start >= buf_.size()) {
      buf_.clear();
      return;
    }
    const size_t end = object_end(std::string_view(buf_).substr(start));
    if (end == std::string_view::npos) {
      buf_.erase(0, start);
      return;
    }
    // Model output is untrusted too: a deeply nested "call" would overflow the stack later.
    const std::string_view text = std::string_view(buf_).substr(start, end);
    if (!json_too_deep(text)) {
      json obj = json::parse(text, nullptr, false);
      if (!obj.is_discarded()) accept(obj, out);
    }
    buf_.erase(0, start + end);
  }
}

ToolCallParser::Output ToolCallParser::add(std::string_view chunk) {
  Output out;
  const bool bracket = tag_ == "{" || tag_ == "[";
  if (state_ == State::kStart) {
    buf_.append(chunk);
    size_t i = 0;
    while (i < buf_.size() && is_ws(buf_[i])) ++i;
    if (i == buf_.size()) return out;  // only whitespace so far
    if (bracket) {
      if (buf_[i] == tag_[0]) {
        state_ = State::kParsing;
        raw_ = buf_;
        buf_.erase(0, tag_ == "[" ? i + 1 : i);
        scan(&out);
      } else {
        state_ = State::kContent;
        out.content = std::move(buf_);
        buf_.clear();
      }
      return out;
    }
    state_ = State::kLookingForTag;
    chunk = {};
  } else if (state_ == State::kParsing) {
    raw_.append(chunk);
    buf_.append(chunk);
    scan(&out);
    return out;
  } else if (state_ == State::kContent) {
    out.content.append(chunk);
    return out;
  } else {
    buf_.append(chunk);
  }
  // kLookingForTag
  const size_t pos = buf_.find(tag_);
  if (pos != std::string::npos) {
    out.content = buf_.substr(0, pos);
    raw_ = buf_.substr(pos);
    buf_.erase(0, pos + tag_.size());
    state_ = State::kParsing;
    scan(&out);
    return out;
  }
  const size_t hold = partial_suffix(buf_, tag_);
  out.content = buf_.substr(0, buf_.size() - hold);
  buf_.erase(0, buf_.size() - hold);
  return out;
}

ToolCallParser::Output ToolCallParser::finish() {
  Output out;
  if (state_ == State::kParsing) {
    if (calls_ == 0) out.content = std::move(raw_);
  } else {
    out.content = std::move(buf_);
  }
  buf_.clear();
  raw_.clear();
  return out;
}

std::string ToolCallParser::infer_tag(const GoTemplate& tmpl) {
  const Node* if_node = first_tool_calls_if(*tmpl.tree().root);
  if (!if_node || !if_node->list) return "{";
  const Node* text = first_text(*if_node->list);
  if (!text) return "{";
  std::string_view t = text->text;
  if (const size_t brace = t.find('{'); brace != std::string_view::npos) t = t.substr(0, brace);
  while (!t.empty() && is_ws(t.front())) t.remove_prefix(1);
  while (!t.empty() && is_ws(t.back())) t.remove_suffix(1);
  return t.empty() ? "{" : std::string(t);
}

}  // namespace paddock::chat
