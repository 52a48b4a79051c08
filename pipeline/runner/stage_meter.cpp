#include "pipeline/runner/stage_meter.h"

#include <algorithm>
#include <fstream>

#include "memory/peak_tracker.h"

namespace cpufold {

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

StageMeter::StageMeter(std::optional<Method> force)
    : method_(force.value_or(reset_peak_rss() ? Method::clear_refs : Method::sampled)) {
  if (method_ == Method::sampled) {
    sampled_peak_ = os_current_rss_bytes();
    sampler_ = std::jthread([this](std::stop_token stop) { sample_loop(stop); });
  }
}

StageMeter::~StageMeter() = default;  // the jthread stops and joins the sampler

const char* StageMeter::method_name(Method m) {
  return m == Method::clear_refs ? "clear_refs" : "sampled";
}

void StageMeter::sample_loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const std::size_t now = os_current_rss_bytes();
    std::size_t seen = sampled_peak_.load();
    while (now > seen && !sampled_peak_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::size_t StageMeter::take_peak() {
  if (method_ == Method::clear_refs) {
    const std::size_t peak = os_peak_rss_bytes();
    reset_peak_rss();
    return peak;
  }
  // The resident size now counts too: the sampler may not have run since the last reset.
  return std::max(sampled_peak_.exchange(os_current_rss_bytes()), os_current_rss_bytes());
}

void StageMeter::end() {
  const std::size_t peak = take_peak();
  if (!current_) return;
  StagePeak& s = stages_[*current_];
  s.peak_bytes = std::max(s.peak_bytes, peak);
  s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  current_.reset();
}

void StageMeter::begin(std::string_view name) {
  end();
  const auto it = std::find_if(stages_.begin(), stages_.end(),
                               [&](const StagePeak& s) { return s.name == name; });
  current_ = static_cast<std::size_t>(it - stages_.begin());
  if (it == stages_.end()) stages_.push_back({std::string(name), 0, 0});
  started_ = std::chrono::steady_clock::now();
}

std::size_t StageMeter::peak_bytes() const {
  std::size_t peak = 0;
  for (const StagePeak& s : stages_) peak = std::max(peak, s.peak_bytes);
  return peak;
}

}  // namespace cpufold
