// Wall time of each module of the trunk's blocks (RunContext::on_module), for `cpufold bench
// block` and `bench model --modules`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/runner/wall_clock.h"

namespace cpufold {

// Seconds per (stage, module), in the order first seen; a module runs until the next one
// begins, its block ends ("") or the stage changes. A stage's blocks are the begins of its
// first module (msa_row_attention, or the template stack's first triangle update): a module may
// begin more than once per block (the extra-MSA stack's transition runs inside the global
// attention's row slabs).
class ModuleClock {
 public:
  struct Entry {
    std::string stage, module;
    double seconds = 0;
    std::int64_t begins = 0;
  };

  // Ends the module running; the ones that begin next count under `name`.
  void stage(std::string_view name) {
    end();
    stage_ = std::string(name);
  }
  // Ends the module running and begins `module` ("": none).
  void begin(std::string_view module) {
    end();
    if (module.empty()) return;
    current_ = index(module);
    ++entries_[current_].begins;
    started_ = WallClock::now();
  }
  void end() {
    if (current_ == kNone) return;
    entries_[current_].seconds += seconds_since(started_);
    current_ = kNone;
  }
  const std::vector<Entry>& entries() const { return entries_; }
  std::int64_t blocks(std::string_view stage) const {
    for (const Entry& e : entries_) {
      if (e.stage == stage) return e.begins;
    }
    return 0;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t index(std::string_view module) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].stage == stage_ && entries_[i].module == module) return i;
    }
    entries_.push_back({stage_, std::string(module)});
    return entries_.size() - 1;
  }

  std::vector<Entry> entries_;
  std::string stage_;
  std::size_t current_ = kNone;
  WallClock::time_point started_;
};

}  // namespace cpufold
