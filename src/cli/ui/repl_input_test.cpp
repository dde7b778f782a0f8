#include "cli/ui/repl_input.h"

#include <gtest/gtest.h>

namespace paddock::cli::ui {
namespace {

TEST(Multiline, SingleLinesPassThrough) {
  MultilineCollector m;
  ASSERT_TRUE(m.feed("hello"));
  EXPECT_EQ(m.take(), "hello");
  ASSERT_TRUE(m.feed(R"("""one line""")"));
  EXPECT_EQ(m.take(), "one line");
}

TEST(Multiline, CollectsUntilClosingQuotes) {
  MultilineCollector m;
  EXPECT_FALSE(m.feed(R"("""first)"));
  EXPECT_TRUE(m.open());
  EXPECT_FALSE(m.feed("second"));
  EXPECT_TRUE(m.feed(R"(third""")"));
  EXPECT_FALSE(m.open());
  EXPECT_EQ(m.take(), "first\nsecond\nthird");
  EXPECT_FALSE(m.feed(R"(""")"));
  EXPECT_TRUE(m.feed(R"(""")"));
  EXPECT_EQ(m.take(), "\n");
}

TEST(Multiline, SetSystemSpansLines) {
  MultilineCollector m;
  EXPECT_FALSE(m.feed(R"(/set system """You are)"));
  EXPECT_TRUE(m.feed(R"(a pirate.""")"));
  const ReplCommand c = parse_repl_command(m.take());
  EXPECT_EQ(c.kind, ReplKind::kSetSystem);
  EXPECT_EQ(c.text, "You are\na pirate.");
  EXPECT_TRUE(m.feed(R"(/set system """short""")"));
  EXPECT_EQ(parse_repl_command(m.take()).text, "short");
}

TEST(ReplCommand, Messages) {
  EXPECT_EQ(parse_repl_command("hello /set").kind, ReplKind::kMessage);
  EXPECT_EQ(parse_repl_command("/tmp/file.txt what is this").kind, ReplKind::kMessage);
  const ReplCommand u = parse_repl_command("/frobnicate");
  EXPECT_EQ(u.kind, ReplKind::kUnknown);
  EXPECT_EQ(u.text, "Unknown command '/frobnicate'. Type /? for help");
}

TEST(ReplCommand, Set) {
  ReplCommand c = parse_repl_command("/set parameter stop a b");
  EXPECT_EQ(c.kind, ReplKind::kSetParameter);
  EXPECT_EQ(c.args, (std::vector<std::string>{"stop", "a", "b"}));
  EXPECT_TRUE(parse_repl_command("/set parameter").args.empty());
  EXPECT_EQ(parse_repl_command("/set parameter seed").kind, ReplKind::kUsage);
  c = parse_repl_command("/set system   Be brief.  ");
  EXPECT_EQ(c.kind, ReplKind::kSetSystem);
  EXPECT_EQ(c.text, "Be brief.");
  EXPECT_EQ(parse_repl_command(R"(/set system "quoted")").text, "quoted");
  EXPECT_EQ(parse_repl_command("/set format json").kind, ReplKind::kSetFormat);
  EXPECT_EQ(parse_repl_command("/set format xml").kind, ReplKind::kUsage);
  EXPECT_EQ(parse_repl_command("/set noformat").kind, ReplKind::kSetNoFormat);
  EXPECT_EQ(parse_repl_command("/set verbose").kind, ReplKind::kSetVerbose);
  EXPECT_EQ(parse_repl_command("/set quiet").kind, ReplKind::kSetQuiet);
  c = parse_repl_command("/set think high");
  EXPECT_EQ(c.kind, ReplKind::kSetThink);
  EXPECT_EQ(c.args, (std::vector<std::string>{"high"}));
  EXPECT_EQ(parse_repl_command("/set nothink").kind, ReplKind::kSetNoThink);
  EXPECT_EQ(parse_repl_command("/set wordwrap").kind, ReplKind::kSetWordwrap);
  EXPECT_EQ(parse_repl_command("/set nowordwrap").kind, ReplKind::kSetNoWordwrap);
  EXPECT_EQ(parse_repl_command("/set history").kind, ReplKind::kSetHistory);
  EXPECT_EQ(parse_repl_command("/set nohistory").kind, ReplKind::kSetNoHistory);
  EXPECT_EQ(parse_repl_command("/set").kind, ReplKind::kHelp);
  EXPECT_EQ(parse_repl_command("/set bogus").kind, ReplKind::kUsage);
}

TEST(ReplCommand, OtherCommands) {
  ReplCommand c = parse_repl_command("/show modelfile");
  EXPECT_EQ(c.kind, ReplKind::kShow);
  EXPECT_EQ(c.args, (std::vector<std::string>{"modelfile"}));
  c = parse_repl_command("/load stories");
  EXPECT_EQ(c.kind, ReplKind::kLoad);
  EXPECT_EQ(c.args[0], "stories");
  EXPECT_EQ(parse_repl_command("/load").kind, ReplKind::kUsage);
  EXPECT_EQ(parse_repl_command("/save mine").kind, ReplKind::kSave);
  EXPECT_EQ(parse_repl_command("/clear").kind, ReplKind::kClear);
  EXPECT_EQ(parse_repl_command("/bye").kind, ReplKind::kBye);
  EXPECT_EQ(parse_repl_command("/exit").kind, ReplKind::kBye);
  EXPECT_EQ(parse_repl_command("/list").kind, ReplKind::kList);
  c = parse_repl_command("/? shortcuts");
  EXPECT_EQ(c.kind, ReplKind::kHelp);
  EXPECT_NE(repl_help(c.args[0]).find("Ctrl + d"), std::string::npos);
  EXPECT_NE(repl_help("").find("/bye"), std::string::npos);
  EXPECT_NE(repl_help("set").find("/set nowordwrap"), std::string::npos);
  EXPECT_NE(repl_parameter_help().find("num_ctx"), std::string::npos);
}

}  // namespace
}  // namespace paddock::cli::ui
