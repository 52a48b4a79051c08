// Process-wide memory accounting: current and peak bytes per tier, plus the OS's view.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace cpufold {

struct TierUsage {
  std::size_t current = 0;
  std::size_t peak = 0;
};

class PeakTracker {
 public:
  static PeakTracker& instance();

  void on_allocate(const std::string& tier, std::size_t bytes);
  void on_release(const std::string& tier, std::size_t bytes);
  // Arenas report their high-water mark separately: a reserved region is not all in use.
  void on_arena_high_water(const std::string& arena, std::size_t bytes);

  std::map<std::string, TierUsage> tiers() const;
  std::map<std::string, std::size_t> arena_peaks() const;
  void reset_peaks();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, TierUsage> tiers_;
  std::map<std::string, std::size_t> arena_peaks_;
};

// Peak resident set size of this process (VmHWM from /proc/self/status), in bytes; 0 if unknown.
std::size_t os_peak_rss_bytes();
// Current resident set size (VmRSS), in bytes; 0 if unknown.
std::size_t os_current_rss_bytes();

// Bytes this process has made the kernel read from and write to storage so far (read_bytes and
// write_bytes of /proc/self/io: page faults of mapped files and their write-back included, the
// page cache's hits not); zeros if unknown.
struct DiskIo {
  std::size_t read_bytes = 0;
  std::size_t write_bytes = 0;
};
DiskIo os_disk_io();

}  // namespace cpufold
