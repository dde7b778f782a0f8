#include "chat/message.h"

#include <gtest/gtest.h>

namespace paddock::chat {
namespace {

using json = nlohmann::ordered_json;

TEST(Message, RoundTripsOllamaJson) {
  const json in = json::parse(R"({"role":"ASSISTANT","content":"","thinking":"hm","tool_calls":[
      {"function":{"name":"f","arguments":{"z":1,"a":{"y":2,"b":3}}}}],"tool_name":"t"})");
  Result<Message> m = message_from_json(in);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->role, "assistant");
  ASSERT_EQ(m->tool_calls.size(), 1u);
  EXPECT_EQ(
      to_json(*m).dump(),
      R"({"role":"assistant","content":"","thinking":"hm","tool_calls":[{"function":{"index":0,"name":"f",)"
      R"("arguments":{"z":1,"a":{"y":2,"b":3}}}}],"tool_name":"t"})");
}

TEST(Message, AcceptsStringArgumentsAndRejectsWrongTypes) {
  Result<ToolCall> c =
      tool_call_from_json(json::parse(R"({"function":{"name":"f","arguments":"{\"x\":1}"}})"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->arguments.dump(), R"({"x":1})");
  EXPECT_FALSE(tool_call_from_json(json::parse(R"({"function":{"name":"f","arguments":[1]}})")).ok());
  Result<std::vector<Message>> bad = messages_from_json(json::parse(R"([{"role":"user","content":5}])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("messages[0]"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(tools_from_json(json::parse(R"([{"type":"function"}])")).ok());
  Result<std::vector<Tool>> none = tools_from_json(json());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace paddock::chat
