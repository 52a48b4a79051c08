// Wall time for logs, records and benchmarks: seconds since an instant of the steady clock.
#pragma once

#include <chrono>

namespace cpufold {

using WallClock = std::chrono::steady_clock;

inline double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

}  // namespace cpufold
