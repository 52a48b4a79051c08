// The one cache shape the ops keep their primitives and sizes in: at most `capacity` entries,
// the most recently used first, the least recently used dropped when a new one needs room.
// A run meets few distinct shapes per object (a chunk, its remainder), a batch of many lengths
// many: the bound keeps memory flat over a batch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace cpufold::detail {

template <typename Key, typename Value>
class RecentlyUsed {
 public:
  explicit RecentlyUsed(std::size_t capacity) : capacity_(capacity) {}

  // The value of `key`, now the most recent; null when absent.
  Value* find(const Key& key) {
    const auto hit = std::find_if(entries_.begin(), entries_.end(),
                                  [&](const auto& e) { return e.first == key; });
    if (hit == entries_.end()) return nullptr;
    std::rotate(entries_.begin(), hit, hit + 1);
    return &entries_.front().second;
  }
  // Adds `key` as the most recent (it must be absent), dropping the least recent when full.
  Value& insert(const Key& key, Value value) {
    if (entries_.size() >= capacity_) entries_.pop_back();
    entries_.insert(entries_.begin(), {key, std::move(value)});
    return entries_.front().second;
  }

  std::size_t size() const { return entries_.size(); }
  // Whether insert() drops least_recent() to make room.
  bool full() const { return entries_.size() >= capacity_; }
  const Value& least_recent() const { return entries_.back().second; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  std::size_t capacity_;
  std::vector<std::pair<Key, Value>> entries_;
};

}  // namespace cpufold::detail
