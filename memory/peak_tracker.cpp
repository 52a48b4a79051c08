#include "memory/peak_tracker.h"

#include <algorithm>
#include <fstream>
#include <string_view>

namespace cpufold {

PeakTracker& PeakTracker::instance() {
  static PeakTracker tracker;
  return tracker;
}

void PeakTracker::on_allocate(const std::string& tier, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  TierUsage& u = tiers_[tier];
  u.current += bytes;
  u.peak = std::max(u.peak, u.current);
}

void PeakTracker::on_release(const std::string& tier, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  TierUsage& u = tiers_[tier];
  u.current -= std::min(u.current, bytes);
}

void PeakTracker::on_arena_high_water(const std::string& arena, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  std::size_t& p = arena_peaks_[arena];
  p = std::max(p, bytes);
}

std::map<std::string, TierUsage> PeakTracker::tiers() const {
  std::lock_guard lock(mutex_);
  return tiers_;
}

std::map<std::string, std::size_t> PeakTracker::arena_peaks() const {
  std::lock_guard lock(mutex_);
  return arena_peaks_;
}

void PeakTracker::reset_peaks() {
  std::lock_guard lock(mutex_);
  for (auto& [name, u] : tiers_) u.peak = u.current;
  arena_peaks_.clear();
}

namespace {
std::size_t status_field_bytes(std::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':') {
      return std::stoull(line.substr(field.size() + 1)) * 1024;  // reported in kB
    }
  }
  return 0;
}
}  // namespace

std::size_t os_peak_rss_bytes() {
  return status_field_bytes("VmHWM");
}
std::size_t os_current_rss_bytes() {
  return status_field_bytes("VmRSS");
}

DiskIo os_disk_io() {
  DiskIo io;
  std::ifstream in("/proc/self/io");
  std::string key;
  std::size_t value = 0;
  while (in >> key >> value) {
    if (key == "read_bytes:") io.read_bytes = value;
    if (key == "write_bytes:") io.write_bytes = value;
  }
  return io;
}

}  // namespace cpufold
