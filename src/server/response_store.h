// The responses kept for the Responses API's `previous_response_id` and GET /v1/responses/{id}:
// in memory only (a restart forgets them), at most `capacity` (the oldest is dropped first),
// each for `ttl` after it was stored. Thread-safe. Times are passed in, so tests need no clock.
//   store.put(id, {response, messages}, Clock::now());
//   if (auto e = store.get(id, Clock::now())) { ... e->messages ... }
#pragma once

#include <chrono>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/requests.h"

namespace paddock::server {

class ResponseStore {
 public:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Json response;  // the response object as it was answered
    Json messages;  // the native messages it answered (its predecessors' too), without instructions
  };

  static constexpr size_t kDefaultCapacity = 100;
  static constexpr std::chrono::seconds kDefaultTtl{3600};

  explicit ResponseStore(size_t capacity = kDefaultCapacity, std::chrono::seconds ttl = kDefaultTtl);

  void put(const std::string& id, Entry entry, Clock::time_point now);
  // The entry, or nullopt when it was never stored, was dropped or has expired.
  std::optional<Entry> get(const std::string& id, Clock::time_point now) const;
  size_t size() const;

 private:
  struct Stored {
    std::string id;
    Clock::time_point at;
    Entry entry;
  };
  void drop_expired(Clock::time_point now);  // mu_ held

  const size_t capacity_;
  const std::chrono::seconds ttl_;
  mutable std::mutex mu_;
  std::list<Stored> order_;  // oldest first; `at` never decreases along it
  std::unordered_map<std::string, std::list<Stored>::iterator> by_id_;
};

}  // namespace paddock::server
