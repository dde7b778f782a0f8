#include "server/response_store.h"

#include <algorithm>
#include <iterator>

namespace paddock::server {

ResponseStore::ResponseStore(size_t capacity, std::chrono::seconds ttl) : capacity_(capacity), ttl_(ttl) {}

void ResponseStore::drop_expired(Clock::time_point now) {
  while (!order_.empty() && now - order_.front().at >= ttl_) {
    by_id_.erase(order_.front().id);
    order_.pop_front();
  }
}

void ResponseStore::put(const std::string& id, Entry entry, Clock::time_point now) {
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  drop_expired(now);
  if (const auto it = by_id_.find(id); it != by_id_.end()) {
    order_.erase(it->second);
    by_id_.erase(it);
  }
  if (order_.size() == capacity_) {
    by_id_.erase(order_.front().id);
    order_.pop_front();
  }
  // A clock that stepped back must not break the oldest-first order drop_expired relies on.
  const Clock::time_point at = order_.empty() ? now : std::max(now, order_.back().at);
  order_.push_back(Stored{id, at, std::move(entry)});
  by_id_[id] = std::prev(order_.end());
}

std::optional<ResponseStore::Entry> ResponseStore::get(const std::string& id, Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end() || now - it->second->at >= ttl_) return std::nullopt;
  return it->second->entry;
}

size_t ResponseStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

}  // namespace paddock::server
