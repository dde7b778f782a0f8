// Golden test: every (template, conversation, add_generation_prompt) line of
// fixtures/templates/jinja/expected.jsonl, rendered like Hugging Face's apply_chat_template
// by Python jinja2, must render byte-identically here, or raise where jinja2 raised.
// The bar is 95% identical and every reference error raised; the test prints the count
// and every mismatch with its first differing byte offset.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/jinja/jinja.h"
#include "tests/support/fixtures.h"

namespace {

using json = nlohmann::ordered_json;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

TEST(JinjaGolden, ExpectedRenders) {
  PADDOCK_REQUIRE_FIXTURES();
  const std::string dir = paddock::testing::fixtures_dir() + "/templates/jinja/";
  const json conversations = json::parse(read_text(dir + "conversations.json"));
  std::map<std::string, json> by_name;
  for (const auto& c : conversations) by_name[c["name"].get<std::string>()] = c;

  std::ifstream lines(dir + "expected.jsonl");
  ASSERT_TRUE(lines) << "cannot read " << dir << "expected.jsonl";
  int total = 0, passed = 0, errors_expected = 0, errors_raised = 0;
  std::string report;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const json want = json::parse(line);
    ++total;
    const std::string name = want["template"];
    const bool expect_error = want.contains("error");
    errors_expected += expect_error;
    std::string what = name;
    paddock::jinja::Options opt;
    opt.date = "2024-07-26";
    auto tmpl = paddock::jinja::Template::parse(read_text(dir + name), opt);
    std::string got_error;
    std::string got;
    if (!want.contains("conversation")) {
      // jinja2 could not parse this template at all.
      if (!tmpl.ok()) got_error = tmpl.status().message();
    } else {
      const std::string conv = want["conversation"];
      const bool agp = want["add_generation_prompt"];
      what += " / " + conv + (agp ? " / gen" : " / nogen");
      json ctx = json::object();
      const json& c = by_name.at(conv);
      ctx["messages"] = c["messages"];
      if (c.contains("tools")) ctx["tools"] = c["tools"];
      for (auto it = want.begin(); it != want.end(); ++it) {
        if (it.key() != "template" && it.key() != "conversation" && it.key() != "output" &&
            it.key() != "error")
          ctx[it.key()] = it.value();
      }
      if (!tmpl.ok()) {
        got_error = tmpl.status().message();
      } else {
        auto r = tmpl->render(ctx);
        if (r.ok()) {
          got = *r;
        } else {
          got_error = r.status().message();
        }
      }
    }
    if (expect_error) {
      if (!got_error.empty()) {
        ++passed;
        ++errors_raised;
      } else {
        report +=
            "  " + what + ": expected error [" + want["error"].get<std::string>() + "], rendered fine\n";
      }
      continue;
    }
    if (!got_error.empty()) {
      report += "  " + what + ": unexpected error: " + got_error + "\n";
      continue;
    }
    const std::string expected = want["output"];
    if (got == expected) {
      ++passed;
      continue;
    }
    size_t off = 0;
    while (off < got.size() && off < expected.size() && got[off] == expected[off]) ++off;
    const size_t from = off > 40 ? off - 40 : 0;
    report += "  " + what + ": first difference at byte " + std::to_string(off) +
              "\n    want: " + escape(expected.substr(from, 120)) +
              "\n    got:  " + escape(got.substr(from, 120)) + "\n";
  }
  std::printf("jinja golden: %d/%d cases pass (%d/%d reference errors raised)\n", passed, total,
              errors_raised, errors_expected);
  if (!report.empty()) std::printf("mismatches:\n%s", report.c_str());
  ASSERT_GT(total, 0);
  EXPECT_EQ(errors_raised, errors_expected) << "every template that raised in jinja2 must raise here";
  EXPECT_GE(passed * 100, total * 95) << passed << "/" << total << " is below the 95% bar";
}

}  // namespace
