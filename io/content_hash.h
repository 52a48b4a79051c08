// XXH3-128 over bytes given piece by piece (libxxhash), as 32 hex digits: the one content hash
// of cpufold's keys (a parameter file's identity, a job's features).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace cpufold {

class ContentHash {
 public:
  ContentHash();
  ~ContentHash();
  ContentHash(const ContentHash&) = delete;
  ContentHash& operator=(const ContentHash&) = delete;

  void add(const void* data, std::size_t bytes);
  // The element count, then the elements: vectors laid end to end cannot collide.
  template <class T>
  void add_values(const std::vector<T>& v) {
    const std::size_t n = v.size();
    add(&n, sizeof n);
    add(v.data(), v.size() * sizeof(T));
  }
  // 32 hex digits of what was added so far.
  std::string hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cpufold
