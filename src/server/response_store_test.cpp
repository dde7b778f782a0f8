#include "server/response_store.h"

#include <gtest/gtest.h>

namespace paddock::server {
namespace {

using Clock = ResponseStore::Clock;
using std::chrono::seconds;

ResponseStore::Entry entry(int n) { return {Json{{"n", n}}, Json::array({Json{{"role", "user"}}})}; }

TEST(ResponseStore, KeepsTheLastCapacityEntries) {
  ResponseStore store(3, seconds(3600));
  const Clock::time_point t0{};
  for (int i = 0; i < 5; ++i) store.put("resp_" + std::to_string(i), entry(i), t0 + seconds(i));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_FALSE(store.get("resp_0", t0 + seconds(5)));
  EXPECT_FALSE(store.get("resp_1", t0 + seconds(5)));
  const auto kept = store.get("resp_2", t0 + seconds(5));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->response["n"], 2);
  EXPECT_EQ(kept->messages.size(), 1u);
  EXPECT_TRUE(store.get("resp_4", t0 + seconds(5)));
  EXPECT_FALSE(store.get("resp_9", t0));
}

TEST(ResponseStore, EntriesExpireAfterTheTtl) {
  ResponseStore store(10, seconds(60));
  const Clock::time_point t0{};
  store.put("a", entry(1), t0);
  store.put("b", entry(2), t0 + seconds(30));
  EXPECT_TRUE(store.get("a", t0 + seconds(59)));
  EXPECT_FALSE(store.get("a", t0 + seconds(60)));
  EXPECT_TRUE(store.get("b", t0 + seconds(60)));
  store.put("c", entry(3), t0 + seconds(61));  // a put drops what expired
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.get("b", t0 + seconds(90)));
  EXPECT_TRUE(store.get("c", t0 + seconds(90)));
}

TEST(ResponseStore, PutAgainReplacesAndRenews) {
  ResponseStore store(2, seconds(60));
  const Clock::time_point t0{};
  store.put("a", entry(1), t0);
  store.put("b", entry(2), t0 + seconds(1));
  store.put("a", entry(3), t0 + seconds(2));  // now the newest
  EXPECT_EQ(store.size(), 2u);
  store.put("c", entry(4), t0 + seconds(3));  // drops b, the oldest
  EXPECT_FALSE(store.get("b", t0 + seconds(3)));
  ASSERT_TRUE(store.get("a", t0 + seconds(3)));
  EXPECT_EQ(store.get("a", t0 + seconds(3))->response["n"], 3);
  EXPECT_TRUE(store.get("a", t0 + seconds(61)));
}

TEST(ResponseStore, ZeroCapacityKeepsNothing) {
  ResponseStore store(0, seconds(60));
  store.put("a", entry(1), Clock::time_point{});
  EXPECT_EQ(store.size(), 0u);
  EXPECT_FALSE(store.get("a", Clock::time_point{}));
}

}  // namespace
}  // namespace paddock::server
