// Unit tests of the Jinja engine. Expected strings are what Python's jinja2 (3.1, sandboxed,
// trim_blocks + lstrip_blocks, HF tojson) prints for the same template.
#include "chat/jinja/jinja.h"

#include <gtest/gtest.h>

#include <string>

#include "chat/jinja/value.h"

namespace paddock::jinja {
namespace {

using Json = nlohmann::ordered_json;

Result<std::string> render(const std::string& src, const Json& ctx = Json::object(), Options opt = {}) {
  if (opt.date.empty()) opt.date = "2024-07-26";
  auto t = Template::parse(src, opt);
  if (!t.ok()) return t.status();
  return t->render(ctx);
}

std::string ok(const std::string& src, const Json& ctx = Json::object()) {
  auto r = render(src, ctx);
  EXPECT_TRUE(r.ok()) << src << " -> " << r.status().message();
  return r.ok() ? *r : "<error: " + r.status().message() + ">";
}

std::string err(const std::string& src, const Json& ctx = Json::object(), Options opt = {}) {
  auto r = render(src, ctx, opt);
  EXPECT_FALSE(r.ok()) << src << " rendered " << (r.ok() ? *r : "");
  return r.ok() ? "" : r.status().message();
}

struct Case {
  const char* src;
  const char* want;
};

void run_cases(const std::vector<Case>& cases, const Json& ctx = Json::object()) {
  for (const auto& c : cases) EXPECT_EQ(ok(c.src, ctx), c.want) << c.src;
}

TEST(JinjaPrinting, PythonReprOfValues) {
  run_cases({
      {"{{ 1.0 }}|{{ 1e20 }}|{{ 0.1 + 0.2 }}|{{ 1/3 }}|{{ 10/2 }}|{{ 1e-5 }}",
       "1.0|1e+20|0.30000000000000004|0.3333333333333333|5.0|1e-05"},
      {"{{ [1, 'a', none, true, 1.5] }}|{{ {'a': 1, 'b': [2]} }}",
       "[1, 'a', None, True, 1.5]|{'a': 1, 'b': [2]}"},
      {"{{ ('x',) }}|{{ (1, 2) }}|{{ [\"it's\"] }}|{{ ['a\\nb'] }}", "('x',)|(1, 2)|[\"it's\"]|['a\\nb']"},
      {"{{ none }}|{{ true }}|{{ false }}|{{ undefined_var }}|", "None|True|False||"},
  });
}

TEST(JinjaPrinting, FloatRepr) {
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(1.5e-7), "1.5e-07");
}

TEST(JinjaOperators, ArithmeticAndLogic) {
  run_cases({
      {"{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 7.5 // 2 }}",
       "3|-4|2|1024|0.5|3.0"},
      {"{{ 1 in [1, 2] }}|{{ 3 not in [1, 2] }}|{{ 'a' in 'abc' }}|{{ 'k' in {'k': 1} }}|{{ 1 ~ 2 ~ 'x' }}",
       "True|True|True|True|12x"},
      {"{{ 1 if true else 2 }}|{{ 1 if false }}|{{ not 1 }}|{{ 1 and 2 }}|{{ 0 or 'x' }}|{{ 1 < 2 < 3 }}",
       "1||False|2|x|True"},
      {"{{ [1, 2] < [1, 3] }}|{{ 'ab' * 3 }}|{{ [1] * 3 }}|{{ -(3) }}|{{ 1 == 1.0 }}|{{ true == 1 }}",
       "True|ababab|[1, 1, 1]|-3|True|True"},
      {"{{ 'a' + 'b' }}|{{ [1] + [2] }}|{{ '%s-%d' % ('x', 3) }}", "ab|[1, 2]|x-3"},
  });
}

TEST(JinjaOperators, Slicing) {
  run_cases({
      {"{{ 'abc'[::-1] }}|{{ [1, 2, 3, 4, 5][1:4:2] }}|{{ [1, 2, 3][-2:] }}|{{ 'abc'[-1] }}",
       "cba|[2, 4]|[2, 3]|c"},
      {"{{ 'h\xc3\xa9llo'[1:3] }}|{{ 'h\xc3\xa9llo'|length }}|{{ 'h\xc3\xa9llo'[::-1] }}",
       "\xc3\xa9l|5|oll\xc3\xa9h"},
      {"{{ [1, 2, 3][10:] }}|{{ [1, 2, 3][::-2] }}", "[]|[3, 1]"},
  });
}

TEST(JinjaStatements, ForLoop) {
  run_cases({
      {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ loop.index }}{{ k }}={{ v }}{% if not loop.last %},{% "
       "endif %}"
       "{% endfor %}",
       "1a=1,2b=2"},
      {"{% for x in [1, 2, 3, 4] if x is even %}{{ x }}:{{ loop.length }}{{ loop.previtem }}/{{ "
       "loop.nextitem }};"
       "{% endfor %}",
       "2:2/4;4:22/;"},
      {"{% for x in [] %}a{% else %}empty{% endfor %}", "empty"},
      {"{% for x in range(5) %}{% if x == 3 %}{% break %}{% endif %}{% if x == 1 %}{% continue %}{% endif "
       "%}{{ x }}"
       "{% endfor %}",
       "02"},
      {"{% for x in 'ab' %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{% endfor "
       "%}",
       "021True110False"},
      {"{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% endfor %}", "aba"},
  });
}

TEST(JinjaStatements, ScopingAndNamespace) {
  run_cases({
      {"{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}", "21"},
      {"{% if true %}{% set y = 5 %}{% endif %}{{ y }}", "5"},
      {"{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
       "6"},
      {"{% set a, b = [1, 2] %}{{ b }}{{ a }}", "21"},
      {"{% set x %}  block {{ 1 }} {% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }}",
       "[  block 1 ]ABC"},
      {"{% with a = 3 %}{{ a }}{% endwith %}{{ a }}", "3"},
  });
}

TEST(JinjaStatements, Macros) {
  run_cases({
      {"{% macro f(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ f(1) }}|{{ f(1, 3, "
       "4, z=5) }}",
       "1-2-()-{}|1-3-(4,)-{'z': 5}"},
      {"{% macro f(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{{ f(b=7, a=0) }}", "07"},
      {"{% macro w() %}[{{ caller() }}]{% endmacro %}{% call w() %}inner{% endcall %}", "[inner]"},
      {"{% macro r(n) %}{% if n > 0 %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(3) }}", "321"},
  });
}

TEST(JinjaWhitespace, TrimAndLstripBlocksLikeJinja2) {
  run_cases({
      {"a\n  {% if true %}\n  b\n  {% endif %}\nc\n", "a\n  b\nc"},
      {"  {%+ if true %}x{% endif %}\n{#- c -#}  y  {# c2 #}\nz {{- ' w ' -}} q\n", "  xy  z w q"},
      {"  {%+ if true %}x{% endif %}\n{# c #}\n  y", "  x  y"},
      {"{% raw %}{{ x }}{% endraw %}\n{%- raw -%}  a  {%- endraw %}b\n", "{{ x }}ab"},
      {"x  {%- if 1 %}\n\n  y{% endif -%}\n\n z\n\n", "x\n  yz\n"},
      {"  {{ 1 }}\n  {% for i in [1] +%}\n{{ i }}\n{% endfor %}\n   {# com #}\nend", "  1\n\n1\nend"},
      {"{% if 1 %}\r\nA\r\n{% endif %}\r\n", "A\n"},
      {"{{ {'a': {'b': 1}} }}{{ '}}' }}{{ '%}' }}", "{'a': {'b': 1}}}}%}"},
  });
}

TEST(JinjaFilters, Strings) {
  run_cases({
      {"{{ '  a b  '|trim }}|{{ 'hello world'|title }}|{{ 'hELLO'|capitalize }}|{{ 'abc'|upper }}|{{ "
       "'ABC'|lower }}",
       "a b|Hello World|Hello|ABC|abc"},
      {"{{ 'a,b'|replace(',', ';') }}|{{ [1, 2]|join('-') }}|{{ 'a\\nb\\nc'|indent(2) }}|{{ "
       "'a\\nb'|indent(2, true) }}",
       "a;b|1-2|a\n  b\n  c|  a\n  b"},
      {"{{ 'hello'|center(11) }}|{{ 'one two  three'|wordcount }}|{{ 12|string }}|{{ [1, 2]|string }}",
       "   hello   |3|12|[1, 2]"},
      {"{{ '<a>'|e }}|{{ 'x'|safe + '\"' }}", "&lt;a&gt;|x&#34;"},
  });
}

TEST(JinjaFilters, Sequences) {
  run_cases({
      {"{{ [3, 1, 2]|sort }}|{{ [3, 1, 2]|sort(reverse=true) }}|{{ ['b', 'A', 'c']|sort }}|{{ [1, 2, 2, "
       "3]|unique|list }}",
       "[1, 2, 3]|[3, 2, 1]|['A', 'b', 'c']|[1, 2, 3]"},
      {"{{ [1, 2, 3]|reverse|list }}|{{ [1, 2, 3]|first }}|{{ [1, 2, 3]|last }}|{{ [1, 2, 3]|length }}|{{ "
       "'ab'|list }}",
       "[3, 2, 1]|1|3|3|['a', 'b']"},
      {"{{ [{'a': 1}, {'a': 2}, {'b': 3}]|selectattr('a')|list }}|{{ [{'a': 1}, {'a': "
       "2}]|map(attribute='a')|list }}",
       "[{'a': 1}, {'a': 2}]|[1, 2]"},
      {"{{ ['a', 'b']|map('upper')|join }}|{{ [1, 2, 3, 4]|select('odd')|list }}|{{ [1, 2, 3, "
       "4]|reject('odd')|list }}",
       "AB|[1, 3]|[2, 4]"},
      {"{{ [{'r': 'u'}, {'r': 'a'}]|rejectattr('r', 'equalto', 'u')|list }}|{{ none|selectattr('a')|list }}",
       "[{'r': 'a'}]|[]"},
      {"{{ [1, 2, 3, 4, 5]|batch(2)|list }}|{{ [1, 2, 3]|sum }}|{{ [3, 1]|min }}|{{ {'b': 1, 'a': "
       "2}|dictsort }}",
       "[[1, 2], [3, 4], [5]]|6|1|[('a', 2), ('b', 1)]"},
      {"{{ {'a': 1}|items|list }}|{{ {'a': 1}|length }}", "[('a', 1)]|1"},
  });
}

TEST(JinjaFilters, NumbersAndDefaults) {
  run_cases({
      {"{{ -3|abs }}|{{ 2.567|round(2) }}|{{ 2.5|round }}|{{ '3'|int + 1 }}|{{ 'x'|int }}|{{ '2.5'|float }}",
       "3|2.57|2.0|4|0|2.5"},
      {"{{ none|default('d') }}|{{ nope|default('d') }}|{{ ''|default('d', true) }}|{{ nope|d('e') }}",
       "None|d|d|e"},
  });
}

TEST(JinjaFilters, ToJsonLikeHuggingFace) {
  run_cases({
      {"{{ {'a': [1, {'b': '\xc3\xa9\"\\n'}]}|tojson }}", "{\"a\": [1, {\"b\": \"\xc3\xa9\\\"\\n\"}]}"},
      {"{{ {'a': [1, 2], 'e': {}, 'l': []}|tojson(indent=2) }}",
       "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": {},\n  \"l\": []\n}"},
      {"{{ '\xc3\xa9'|tojson(ensure_ascii=true) }}|{{ 1.5|tojson }}|{{ none|tojson }}|{{ {'z': 1, 'a': "
       "2}|tojson }}",
       "\"\\u00e9\"|1.5|null|{\"z\": 1, \"a\": 2}"},
  });
  // Key order follows the context's insertion order, as Python dicts do.
  EXPECT_EQ(ok("{{ t|tojson }}", Json::parse(R"({"t": {"type": "f", "b": 1, "a": 2}})")),
            "{\"type\": \"f\", \"b\": 1, \"a\": 2}");
}

TEST(JinjaMethods, StringAndDict) {
  run_cases({
      {"{{ 'a b  c'.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ ' x '.strip() }}",
       "['a', 'b', 'c']|['a', 'b', '', 'c']|['a', 'b,c']|x"},
      {"{{ 'xxaxx'.strip('x') }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ "
       "'abcabc'.find('c') }}",
       "a|True|True|2"},
      {"{{ 'abcabc'.count('b') }}|{{ '{} and {}'.format(1, 'b') }}|{{ '-'.join(['a', 'b']) }}|{{ "
       "'x'.rstrip() }}",
       "2|1 and b|a-b|x"},
      {"{{ {'a': 1}.get('a') }}|{{ {'a': 1}.get('b') }}|{{ {'a': 1}.get('b', 5) }}|{{ {'a': 1}.keys()|list "
       "}}",
       "1|None|5|['a']"},
      {"{{ {'a': 1}.values()|list }}|{{ {'a': 1}.items()|list }}", "[1]|[('a', 1)]"},
  });
}

TEST(JinjaTests, BuiltinTests) {
  run_cases({
      {"{{ x is defined }}|{{ none is none }}|{{ 1 is number }}|{{ true is boolean }}|{{ 1 is integer }}|{{ "
       "1.0 is float }}",
       "False|True|True|True|True|True"},
      {"{{ [] is sequence }}|{{ {} is mapping }}|{{ 'a' is iterable }}|{{ 3 is odd }}|{{ 1 is eq 1 }}|{{ 2 "
       "is in [1, 2] }}",
       "True|True|True|True|True|True"},
      {"{{ true is true }}|{{ 0 is false }}|{{ 'a' is string }}|{{ x is undefined }}|{{ 4 is divisibleby 2 "
       "}}",
       "True|False|True|True|True"},
      {"{{ range is callable }}|{{ 1 is not none }}|{{ 4 is even }}", "True|True|True"},
  });
}

TEST(JinjaGlobals, RangeDictNamespaceStrftime) {
  run_cases({
      {"{{ range(3)|list }}|{{ range(1, 10, 3)|list }}|{{ range(5, 0, -2)|list }}|{{ dict(a=1) }}|{{ "
       "namespace(a=1).a }}",
       "[0, 1, 2]|[1, 4, 7]|[5, 3, 1]|{'a': 1}|1"},
      {"{{ strftime_now('%Y-%m-%d %A %B %d %b %a') }}", "2024-07-26 Friday July 26 Jul Fri"},
  });
}

TEST(JinjaContext, ChatVariables) {
  const Json ctx =
      Json::parse(R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true,
                                    "bos_token": "<s>"})");
  EXPECT_EQ(ok("{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m['content'] }}{% endfor %}"
               "{% if add_generation_prompt %}>{% endif %}",
               ctx),
            "<s>[user]Hi>");
}

TEST(JinjaUndefined, BehavesLikeJinja2Default) {
  run_cases({
      {"[{{ nope }}]{{ nope|length }}{% for x in nope %}x{% endfor %}{% if not nope %}f{% endif %}", "[]0f"},
      {"{{ {'a': 1}.b is defined }}|{{ nope is defined }}|{{ nope ~ 'x' }}", "False|False|x"},
  });
  EXPECT_NE(err("{{ nope.attr }}").find("UndefinedError: 'nope' is undefined"), std::string::npos);
  EXPECT_NE(err("{{ {'a': 1}.b.c }}").find("'dict object' has no attribute 'b'"), std::string::npos);
  EXPECT_NE(err("{{ nope + 1 }}").find("UndefinedError"), std::string::npos);
}

TEST(JinjaErrors, MessagesCarryLineNumbers) {
  EXPECT_EQ(err("line1\n{{ raise_exception('boom') }}"), "TemplateError: boom (line 2)");
  EXPECT_NE(err("a\nb\n{% if x %}").find("(line 3)"), std::string::npos);
  EXPECT_NE(err("{% generation %}x{% endgeneration %}").find("unknown tag 'generation'"), std::string::npos);
  EXPECT_NE(err("{{ 1 + }}").find("TemplateSyntaxError"), std::string::npos);
  EXPECT_NE(err("{{ 'a' + {} }}").find("TypeError: can only concatenate str"), std::string::npos);
  EXPECT_NE(err("{{ x|no_such_filter }}").find("No filter named 'no_such_filter'"), std::string::npos);
  EXPECT_NE(err("{{ [1]|map('x')|tojson }}").find("No filter named"), std::string::npos);
  EXPECT_NE(err("{{ [1]|map('string')|tojson }}").find("not JSON serializable"), std::string::npos);
  EXPECT_NE(err("{% for a, b in [1] %}{% endfor %}").find("TypeError"), std::string::npos);
  EXPECT_NE(err("{{ 1 // 0 }}").find("division"), std::string::npos);
  EXPECT_NE(err("{# open").find("comment"), std::string::npos);
  EXPECT_NE(err("{{ 'open }}").find("string"), std::string::npos);
}

TEST(JinjaSandbox, RefusesInternalsAndMutation) {
  EXPECT_NE(err("{{ ''.__class__ }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(err("{{ ''.__class__.__mro__[1].__subclasses__() }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(err("{{ range.__globals__ }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(err("{{ x['__class__'] }}", Json::parse(R"({"x": {}})")).find("SecurityError"),
            std::string::npos);
  EXPECT_NE(
      err("{% set l = [] %}{{ l.append(1) }}").find("SecurityError: access to attribute 'append' of 'list'"),
      std::string::npos);
  EXPECT_NE(err("{% set d = {} %}{{ d.update({'a': 1}) }}").find("SecurityError"), std::string::npos);
  EXPECT_NE(err("{{ messages.pop() }}", Json::parse(R"({"messages": [1]})")).find("SecurityError"),
            std::string::npos);
  // The context is never modified: lists stay as they came in.
  EXPECT_EQ(ok("{% set l = [1] %}{% set m = l + [2] %}{{ l }}{{ m }}"), "[1][1, 2]");
}

TEST(JinjaSandbox, HostileTemplatesStopWithAnError) {
  EXPECT_NE(err("{{ 'x' * 10**9 }}").find("exceeds"), std::string::npos);
  // Empty sequences repeated a billion times are empty at once (jinja_fuzz found the loop).
  EXPECT_EQ(ok("{{ '' * 10**9 }}|{{ ([] * 10**9)|length }}"), "|0");
  EXPECT_NE(err("{{ range(10**9)|length }}").find("Range too big"), std::string::npos);
  EXPECT_NE(err("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nested deeper"), std::string::npos);
  Options few;
  few.limits.max_iterations = 20000;
  EXPECT_NE(err("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                Json::object(), few)
                .find("iterations"),
            std::string::npos);
  few.limits.max_steps = 1000;
  EXPECT_NE(err("{% for i in range(10000) %}{{ i + i }}{% endfor %}", Json::object(), few).find("steps"),
            std::string::npos);
  EXPECT_NE(
      err("{% set ns = namespace(s='xx') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
          .find("exceeds"),
      std::string::npos);
  EXPECT_NE(
      err("{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}")
          .find("limit"),
      std::string::npos);
  EXPECT_NE(err("{% set ns = namespace(l=[]) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}{% endfor %}")
                .find("nested deeper"),
            std::string::npos);
  EXPECT_NE(
      err("{{ " + std::string(2000, '(') + "1" + std::string(2000, ')') + " }}").find("nesting too deep"),
      std::string::npos);
  EXPECT_NE(err("{{ " + std::string(2000, '[') + std::string(2000, ']') + " }}").find("nesting too deep"),
            std::string::npos);
  std::string deep_ifs;
  for (int i = 0; i < 400; ++i) deep_ifs += "{% if 1 %}";
  EXPECT_NE(err(deep_ifs).find("nesting too deep"), std::string::npos);
  EXPECT_NE(err("{{ 2 ** 200 }}").find("overflow"), std::string::npos);
  // A namespace holding itself must not leak (LeakSanitizer checks this in the sanitizer build).
  EXPECT_EQ(ok("{% set ns = namespace() %}{% set ns.me = ns %}ok"), "ok");

  Options small;
  small.limits.max_output_bytes = 100;
  EXPECT_NE(err("{% for i in range(200) %}x{% endfor %}", Json::object(), small).find("exceeds"),
            std::string::npos);
}

TEST(JinjaApi, OptionsAndContext) {
  Options opt;
  opt.date = "2024-13-01";
  EXPECT_FALSE(Template::parse("x", opt).ok());
  auto t = Template::parse("{{ a }}");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->render(Json::array()).ok());
  EXPECT_EQ(*t->render(nlohmann::json{{"a", 1}}), "1");
  Options raw;
  raw.trim_blocks = false;
  raw.lstrip_blocks = false;
  raw.date = "2024-01-01";
  auto t2 = Template::parse("  {% if true %}\nx{% endif %}", raw);
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(*t2->render(Json::object()), "  \nx");
}

}  // namespace
}  // namespace paddock::jinja
