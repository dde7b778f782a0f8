#include "chat/gotmpl.h"

#include <gtest/gtest.h>

#include "chat/render.h"

namespace paddock::chat {
namespace {

Value data() {
  return Value::object(
      Value::Flavor::kGoMap,
      {field("Name", "Name", Value("Ann")), field("N", "N", Value(3)), field("Empty", "Empty", Value("")),
       field("List", "List", Value::list({Value("a"), Value("b")})),
       field("Map", "Map",
             Value::object(Value::Flavor::kGoMap, {field("z", "z", Value(1)), field("a", "a", Value(2))})),
       field("Msg", "Msg", message_value(Message{"user", "hi", "", {}, {}, "", ""}))});
}

std::string render(std::string_view text, const ExecOptions& opt = {}) {
  Result<GoTemplate> t = GoTemplate::parse(text);
  if (!t.ok()) return "PARSE: " + t.status().message();
  Result<std::string> r = t->execute(data(), opt);
  return r.ok() ? *r : "EXEC: " + r.status().message();
}

TEST(GoTemplate, TextActionsAndTrim) {
  EXPECT_EQ(render("a {{- .Name -}} b{{.Response}}"), "aAnnb<no value>");
  EXPECT_EQ(render("x  {{- /* c */ -}}  y{{.Response}}"), "xy<no value>");
  EXPECT_EQ(render("{{ .Missing }}|{{ .Response }}"), "<no value>|<no value>");
}

TEST(GoTemplate, AppendsResponseWhenUnused) { EXPECT_EQ(render("hi "), "hi <no value>"); }

TEST(GoTemplate, Literals) {
  EXPECT_EQ(render(R"({{ "a\tb\u00e9" }}{{ `r\n` }}{{ 'x' }}{{ 0x10 }}{{ 1.5 }}{{ true }}{{.Response}})"),
            "a\tb\xC3\xA9r\\n12016"
            "1.5true<no value>");
}

TEST(GoTemplate, ControlFlow) {
  EXPECT_EQ(render("{{ if eq .N 1 }}one{{ else if eq .N 3 }}three{{ else }}other{{ end }}{{.Response}}"),
            "three<no value>");
  EXPECT_EQ(render("{{ range $i, $v := .List }}{{ $i }}={{ $v }};{{ end }}{{.Response}}"),
            "0=a;1=b;<no value>");
  EXPECT_EQ(render("{{ range slice .List 0 0 }}x{{ else }}none{{ end }}{{.Response}}"), "none<no value>");
  EXPECT_EQ(render("{{ range $k, $v := .Map }}{{ $k }}{{ $v }}{{ end }}{{.Response}}"), "a2z1<no value>");
  EXPECT_EQ(render("{{ range 5 }}{{ if eq . 1 }}{{ continue }}{{ end }}{{ if eq . 3 }}{{ break }}{{ end }}{{ "
                   ". }}{{ end }}{{.Response}}"),
            "02<no value>");
  EXPECT_EQ(
      render("{{ with .Name }}[{{ . }}]{{ end }}{{ with .Empty }}no{{ else }}empty{{ end }}{{.Response}}"),
      "[Ann]empty<no value>");
}

TEST(GoTemplate, VariablesAndScopes) {
  EXPECT_EQ(render("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}{{.Response}}"),
            "2<no value>");
  EXPECT_NE(render("{{ if true }}{{ $y := 3 }}{{ end }}{{ $y }}").find("undefined variable"),
            std::string::npos);
  EXPECT_EQ(render("{{ range .List }}{{ $.Name }}{{ end }}{{.Response}}"), "AnnAnn<no value>");
}

TEST(GoTemplate, DefineTemplateBlock) {
  EXPECT_EQ(
      render(
          R"({{ define "t" }}<{{ . }}>{{ end }}{{ template "t" .Name }}{{ block "b" .N }}[{{ . }}]{{ end }}{{.Response}})"),
      "<Ann>[3]<no value>");
}

TEST(GoTemplate, Functions) {
  EXPECT_EQ(
      render(
          "{{ and 1 0 }}{{ or 0 \"\" 5 }}{{ not .Empty }}{{ eq .N 1 2 3 }}{{ ne .Name \"x\" }}{{.Response}}"),
      "05truetruetrue<no value>");
  EXPECT_EQ(render("{{ lt 1 2 }}{{ le 2 2 }}{{ gt \"b\" \"a\" }}{{ ge 1 2 }}{{.Response}}"),
            "truetruetruefalse<no value>");
  EXPECT_EQ(
      render("{{ len .List }}{{ index .List 1 }}{{ slice .List 1 }}{{ index .Map \"z\" }}{{.Response}}"),
      "2b[b]1<no value>");
  EXPECT_EQ(render(R"({{ printf "%s-%d-%q-%5.2f-%v-%t" .Name .N .Name 3.14159 .List true }}{{.Response}})"),
            "Ann-3-\"Ann\"- 3.14-[a b]-true<no value>");
  EXPECT_EQ(
      render(R"({{ printf "%d" "x" }}{{ printf "%s" }}{{ print 1 2 "a" "b" }}{{ println 1 }}{{.Response}})"),
      "%!d(string=x)%!s(MISSING)1 2ab1\n<no value>");
  EXPECT_EQ(render(R"({{ html "<a&'>" }}{{ js "a'<" }}{{ urlquery "a b&" }}{{.Response}})"),
            "&lt;a&amp;&#39;&gt;a\\'\\u003Ca+b%26<no value>");
  EXPECT_EQ(render(R"({{ json .List }}{{ json "<&>" }}{{ .Name | printf "%s!" }}{{.Response}})"),
            "[\"a\",\"b\"]\"\\u003c\\u0026\\u003e\"Ann!<no value>");
  ExecOptions opt;
  opt.date = "2024-03-01";
  EXPECT_EQ(render("{{ currentDate }} {{ yesterdayDate }}{{.Response}}", opt),
            "2024-03-01 2024-02-29<no value>");
}

TEST(GoTemplate, GoPrinting) {
  EXPECT_EQ(render("{{ .Map }}|{{ .List }}|{{ 1e6 }}|{{ 0.0001 }}{{.Response}}"),
            "map[a:2 z:1]|[a b]|1e+06|0.0001<no value>");
  EXPECT_EQ(render("{{ .Msg.Role }}{{.Response}}"), "user<no value>");
}

TEST(GoTemplate, ErrorsCarryPositions) {
  EXPECT_EQ(render("a\n  {{ if }}"), "PARSE: template: 2:9: missing value for if");
  EXPECT_NE(render("{{ nosuch 1 }}").find("function \"nosuch\" not defined"), std::string::npos);
  EXPECT_NE(render("{{ if true }}").find("unexpected EOF"), std::string::npos);
  EXPECT_NE(render("{{ \"abc }}").find("unterminated quoted string"), std::string::npos);
  EXPECT_NE(render("{{ break }}").find("{{break}} outside {{range}}"), std::string::npos);
  EXPECT_EQ(render("\n{{ .Msg.Nope }}"),
            "EXEC: template: 2:4: executing: can't evaluate field Nope in type api.Message");
  EXPECT_NE(render("{{ index .List 7 }}").find("error calling index: index out of range: 7"),
            std::string::npos);
  EXPECT_NE(render("{{ eq 1 \"a\" }}").find("incompatible types for comparison"), std::string::npos);
  EXPECT_NE(render("{{ template \"none\" }}").find("no such template"), std::string::npos);
}

TEST(GoTemplate, HostileTemplatesHitLimits) {
  ExecOptions opt;
  opt.limits.max_range_iterations = 1000;
  EXPECT_NE(render("{{ range 100000000 }}x{{ end }}", opt).find("range exceeded"), std::string::npos);
  EXPECT_NE(render(R"({{ define "a" }}{{ template "a" }}{{ end }}{{ template "a" }})")
                .find("maximum template depth"),
            std::string::npos);
  opt = {};
  opt.limits.max_output_bytes = 1 << 16;
  EXPECT_NE(
      render(
          R"({{ define "a" }}{{ range 1000 }}xxxxxxxxxx{{ end }}{{ end }}{{ range 1000 }}{{ template "a" }}{{ end }})",
          opt)
          .find("output exceeds"),
      std::string::npos);
  opt = {};
  opt.limits.max_steps = 10000;
  EXPECT_NE(render("{{ range 100000 }}{{ end }}", opt).find("steps"), std::string::npos);
  std::string deep(5000, '(');
  EXPECT_NE(render("{{ " + deep + " }}").find("PARSE"), std::string::npos);
}

TEST(GoTemplate, LegacyTemplatesRunPerTurnAndCutAfterResponse) {
  Result<GoTemplate> tmpl =
      GoTemplate::parse("{{ if .System }}S:{{ .System }} {{ end }}U:{{ .Prompt }} A:{{ .Response }}|");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().to_string();
  const std::vector<Message> msgs = {{"system", "sys", "", {}, {}, "", ""},
                                     {"user", "q1", "", {}, {}, "", ""},
                                     {"assistant", "a1", "", {}, {}, "", ""},
                                     {"user", "q2", "", {}, {}, "", ""}};
  Result<std::string> out = render_chat(*tmpl, msgs, {}, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(*out, "S:sys U:q1 A:a1|U:q2 A:");
}

TEST(GoTemplate, ToolsAndToolCallsPrintAsOllamaDoes) {
  const char* tools = R"([{"type":"function","function":{"name":"get_weather","description":"Get <weather>",
    "parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City"},
    "unit":{"type":["string","null"],"enum":["c","f"]}}}}}])";
  const char* msgs = R"([{"role":"user","content":"hi"},{"role":"assistant","content":"",
    "tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris","days":2}}}]}])";
  const char* tmpl = R"({{ range .Tools }}{{ . }}
{{ .Function }}
{{ range $k, $v := .Function.Parameters.Properties }}{{ $k }}:{{ toTypeScriptType $v }};{{ end }}
{{ end }}{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Name }}{{ .Function.Arguments }}{{ json .Function.Arguments }}{{ end }}{{ end }})";
  Result<std::string> out = render_chat_json(tmpl, msgs, tools, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(
      *out,
      R"({"type":"function","function":{"name":"get_weather","description":"Get \u003cweather\u003e","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City"},"unit":{"type":["string","null"],"enum":["c","f"]}}}}}
{"name":"get_weather","description":"Get \u003cweather\u003e","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City"},"unit":{"type":["string","null"],"enum":["c","f"]}}}}
city:string;unit:string | null;
get_weather{"city":"Paris","days":2}{"city":"Paris","days":2})");
}

}  // namespace
}  // namespace paddock::chat

namespace paddock::chat {
namespace {

TEST(RenderChat, CollatesAndTagsImages) {
  Result<GoTemplate> t =
      GoTemplate::parse("{{ .System }}|{{ range .Messages }}{{ .Role }}:{{ .Content }};{{ end }}");
  ASSERT_TRUE(t.ok());
  const std::vector<Message> msgs = {{"system", "s1", "", {}, {}, "", ""},
                                     {"system", "s2", "", {}, {}, "", ""},
                                     {"user", "look [img] here", "", {"AAAA"}, {}, "", ""},
                                     {"user", "and", "", {"BBBB", "CCCC"}, {}, "", ""},
                                     {"tool", "t1", "", {}, {}, "", ""},
                                     {"tool", "t2", "", {}, {}, "", ""}};
  Result<std::string> out = render_chat(*t, msgs, {}, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(*out, "s1\n\ns2|system:s1\n\ns2;user:look [img-0] here\n\n[img-1][img-2]and;tool:t1;tool:t2;");
}

TEST(RenderChat, FillInTheMiddle) {
  Result<GoTemplate> t = GoTemplate::parse("<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>");
  ASSERT_TRUE(t.ok());
  Result<std::string> out = render_fim(*t, "def f(", "return x", {});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "<PRE> def f( <SUF>return x <MID>");
}

TEST(RenderChat, JsonErrorsAreStatuses) {
  EXPECT_FALSE(render_chat_json("{{ .Prompt }}", "not json", "", {}).ok());
  EXPECT_FALSE(render_chat_json("{{ .Prompt }}", R"([{"role": 3}])", "", {}).ok());
  EXPECT_FALSE(render_chat_json("{{ .Prompt }}", "[]", R"({"x":1})", {}).ok());
  EXPECT_FALSE(render_chat_json("{{ if }}", "[]", "", {}).ok());
}

}  // namespace
}  // namespace paddock::chat
