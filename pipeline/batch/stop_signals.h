// SIGINT, SIGTERM and SIGHUP recorded instead of ending the process, while a multi-instance
// batch runs: the scheduler then stops its workers and writes its records before it ends.
#pragma once

#include <array>
#include <csignal>

namespace cpufold {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The last of those signals received since construction; 0: none.
  static int received();

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

}  // namespace cpufold
