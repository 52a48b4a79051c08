// Progress of a `cpufold predict` batch: the log (stderr and log.txt) and an honest
// estimate of the time left.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace cpufold {

// "2026-12-04T05:06:07Z": now, UTC, ISO 8601 (batch.json's start and end times).
std::string utc_now();

// "0:07", "12:34", "1:02:03".
std::string clock_time(double seconds);

// Appends "YYYY-MM-DD HH:MM:SS line" (made safe as in BatchLog::say) to the log at `path`;
// false when it cannot be written.
bool append_log_line(const std::filesystem::path& path, const std::string& line);

// Every line goes to `progress` (stderr) and, with a timestamp, to log.txt, appended line by
// line as ColabFold's log handler does: no rewrites for a long batch, and a kill loses
// nothing already said.
class BatchLog {
 public:
  // InputError when `path` cannot be opened for appending.
  BatchLog(const std::filesystem::path& path, std::function<void(const std::string&)> progress);
  // Writes `line` made safe (text::safe_text): invalid UTF-8 and control bytes escaped.
  void say(const std::string& line);

 private:
  std::ofstream out_;
  std::function<void(const std::string&)> progress_;
};

// Time left from the measured seconds per unit of work. A run of a query of length L with I
// iterations counts I * L^2 units (the size of the pair representation): simple, right
// for single-sequence and shallow MSAs, optimistic for very deep ones.
class TimeEstimate {
 public:
  void plan(double units) { planned_ += units; }
  void finished(double units, double seconds);
  void drop(double units) { planned_ -= units; }  // a job that failed
  // Seconds left, given the units of the run in progress and its elapsed seconds; negative
  // while nothing was measured yet.
  double remaining(double current_units, double current_elapsed) const;

 private:
  double planned_ = 0, done_units_ = 0, done_seconds_ = 0;
};

}  // namespace cpufold
