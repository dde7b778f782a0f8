#include "store/modelfile.h"

#include <gtest/gtest.h>

namespace paddock::store {
namespace {

std::string error_of(std::string_view text) {
  auto r = parse_modelfile(text);
  return r.ok() ? "" : r.status().message();
}

TEST(Modelfile, EveryInstruction) {
  auto r = parse_modelfile(
      "# a comment\n"
      "from ./model.gguf\n"
      "PARAMETER temperature 0.7\n"
      "parameter stop <|im_end|>\n"
      "PARAMETER stop \"</s>\"\n"
      "PARAMETER num_ctx 4096\n"
      "PARAMETER use_mmap false\n"
      "TEMPLATE \"\"\"{{ .System }}\n{{ .Prompt }}\"\"\"\n"
      "System You are    helpful.  \n"
      "ADAPTER ./lora.gguf\n"
      "LICENSE \"\"\"MIT\nLicense\"\"\"\n"
      "MESSAGE user Hello there\n"
      "MESSAGE assistant Hi!\n"
      "REQUIRES v0.14.0\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->from, std::vector<std::string>{"./model.gguf"});
  EXPECT_EQ(r->adapters, std::vector<std::string>{"./lora.gguf"});
  EXPECT_EQ(*r->template_text, "{{ .System }}\n{{ .Prompt }}");
  EXPECT_EQ(*r->system, "You are    helpful.");
  EXPECT_EQ(r->licenses, std::vector<std::string>{"MIT\nLicense"});
  ASSERT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(r->messages[0], (Message{"user", "Hello there"}));
  EXPECT_EQ(r->messages[1], (Message{"assistant", "Hi!"}));
  EXPECT_EQ(r->requires_version, "0.14.0");
  EXPECT_EQ(r->params.to_json(),
            "{\"num_ctx\":4096,\"stop\":[\"\\u003c|im_end|\\u003e\",\"\\u003c/s\\u003e\"],"
            "\"temperature\":0.7,\"use_mmap\":false}\n");
  EXPECT_EQ(r->commands.size(), 13u);
  EXPECT_EQ(r->commands[1].name, "temperature");
  EXPECT_EQ(r->commands[1].line, 3);
  EXPECT_EQ(r->commands[1].column, 1);
}

TEST(Modelfile, QuotingAndWhitespace) {
  auto r = parse_modelfile("FROM m\nSYSTEM \"  spaced  \"\nTEMPLATE \"\"\"\nfirst\n\"\"\"\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->system, "  spaced  ");
  EXPECT_EQ(*r->template_text, "\nfirst\n");
  // CRLF line ends, tabs, BOM, and a value with a '#' inside.
  r = parse_modelfile(
      "\xEF\xBB\xBF"
      "FROM\tm\r\nSYSTEM a # b\r\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->from[0], "m");
  EXPECT_EQ(*r->system, "a # b");
  // A quoted value may span lines until the line that closes it.
  r = parse_modelfile("FROM m\nSYSTEM \"one\ntwo\"\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->system, "one\ntwo");
}

TEST(Modelfile, Utf16) {
  const std::string utf8 = "FROM m\nSYSTEM h\xC3\xA9llo\n";
  std::string le = "\xFF\xFE";
  for (const char c : std::string("FROM m\nSYSTEM h")) le += std::string{c, '\0'};
  le += std::string("\xE9\0", 2);
  for (const char c : std::string("llo\n")) le += std::string{c, '\0'};
  auto r = parse_modelfile(le);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r->system, "h\xC3\xA9llo");
}

TEST(Modelfile, CaseInsensitiveKeywords) {
  auto r = parse_modelfile("FrOm m\nPaRaMeTeR top_k 5\nmEsSaGe system be brief\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::get<int64_t>(r->params.values().at("top_k")), 5);
  EXPECT_EQ(r->messages[0].role, "system");
}

TEST(Modelfile, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(error_of("FROM m\nBOGUS x\n"),
            "(line 2, column 1): command must be one of \"from\", \"license\", \"template\", \"system\", "
            "\"adapter\", "
            "\"draft\", \"renderer\", \"parser\", \"parameter\", \"message\", or \"requires\"");
  EXPECT_EQ(error_of("FROM m\n  PARAMETER numa true\n"), "(line 2, column 3): unknown parameter 'numa'");
  EXPECT_EQ(error_of("FROM m\nPARAMETER top_k high\n"),
            "(line 2, column 1): invalid int value \"high\" for parameter 'top_k'");
  EXPECT_EQ(error_of("FROM m\nPARAMETER temperature warm\n"),
            "(line 2, column 1): invalid float value \"warm\" for parameter 'temperature'");
  EXPECT_EQ(error_of("FROM m\nPARAMETER use_mmap maybe\n"),
            "(line 2, column 1): invalid bool value \"maybe\" for parameter 'use_mmap'");
  EXPECT_EQ(error_of("FROM m\nMESSAGE robot hi\n"),
            "(line 2, column 9): message role must be one of \"system\", \"user\", or \"assistant\", found "
            "\"robot\"");
  EXPECT_EQ(error_of("FROM m\nSYSTEM \"\"\"open\nstill open\n"),
            "(line 2, column 8): unexpected end of file: the quoted value is not closed");
  EXPECT_EQ(error_of("FROM m\nREQUIRES 1.x\n"),
            "(line 2, column 1): requires must be a valid semver (e.g. 0.14.0), found \"1.x\"");
  EXPECT_EQ(error_of("FROM m\nTEMPLATE\n"), "(line 2, column 1): template needs a value");
  EXPECT_EQ(error_of("FROM m\nPARAMETER temperature\n"),
            "(line 2, column 1): PARAMETER needs a name and a value");
  EXPECT_EQ(error_of("FROM m\nPARAMETER message user hi\n"),
            "(line 2, column 11): \"message\" is not a parameter; write it as its own command");
  EXPECT_EQ(error_of("SYSTEM hi\n"), "no FROM line");
  EXPECT_EQ(error_of(""), "no FROM line");
  EXPECT_NE(error_of("FROM m\nPARAMETER temperature 1e99\n"), "");
  EXPECT_NE(error_of("FROM m\nPARAMETER temperature nan\n"), "");
  EXPECT_NE(error_of("FROM m\n9FROM x\n"), "");
}

TEST(Modelfile, Semver) {
  for (const char* ok : {"0.14.0", "v1", "1.2", "1.2.3-rc.1", "1.2.3+build.5", "v10.0.1-alpha-1"})
    EXPECT_TRUE(parse_modelfile(std::string("FROM m\nREQUIRES ") + ok + "\n").ok()) << ok;
  for (const char* bad : {"01.2.3", "1.2.3.4", "1.2-rc", "1.2.3-", "1.2.3-01", "abc", "1..2"})
    EXPECT_FALSE(parse_modelfile(std::string("FROM m\nREQUIRES ") + bad + "\n").ok()) << bad;
}

TEST(Modelfile, DeprecatedParametersWarn) {
  auto r = parse_modelfile("FROM m\nPARAMETER mirostat 2\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->params.empty());
  EXPECT_EQ(r->warnings, std::vector<std::string>{"parameter mirostat is deprecated"});
}

TEST(Modelfile, RoundTripsThroughToString) {
  const std::string text =
      "FROM llama3.2\nTEMPLATE \"\"\"a \"quoted\"\nline\"\"\"\nSYSTEM \" padded \"\nPARAMETER stop "
      "<|eot_id|>\n"
      "MESSAGE user hi there\nLICENSE MIT\n";
  auto a = parse_modelfile(text);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->to_string(), text);
  auto b = parse_modelfile(a->to_string());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b->template_text, *a->template_text);
  EXPECT_EQ(*b->system, " padded ");
}

// Found by modelfile_fuzz: a quoted FROM spanning lines must be written back quoted.
TEST(Modelfile, MultiLineFromRoundTrips) {
  auto a = parse_modelfile("FROM \"\nPARAMETER stop \"T\n\x01\"E&MP\"\"\"");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->commands.size(), 1u);
  auto b = parse_modelfile(a->to_string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->from, a->from);
  EXPECT_TRUE(b->params.empty());
}

}  // namespace
}  // namespace paddock::store
