#include "pipeline/batch/stop_signals.h"

namespace cpufold {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

}  // namespace

StopSignals::StopSignals() {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &old_[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
}

int StopSignals::received() {
  return g_stop_signal;
}

}  // namespace cpufold
