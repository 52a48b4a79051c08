#include "io/content_hash.h"

#include <xxhash.h>

#include <cstdio>
#include <new>

namespace cpufold {

struct ContentHash::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

ContentHash::ContentHash() : state_(std::make_unique<State>()) {
  if (state_->xxh == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(state_->xxh);
}

ContentHash::~ContentHash() = default;

void ContentHash::add(const void* data, std::size_t bytes) {
  XXH3_128bits_update(state_->xxh, data, bytes);
}

std::string ContentHash::hex() const {
  const XXH128_hash_t h = XXH3_128bits_digest(state_->xxh);
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return text;
}

}  // namespace cpufold
