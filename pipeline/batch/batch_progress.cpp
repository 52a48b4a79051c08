#include "pipeline/batch/batch_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "io/text_safety.h"
#include "memory/error.h"

namespace cpufold {

std::string clock_time(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

BatchLog::BatchLog(const std::filesystem::path& path,
                   std::function<void(const std::string&)> progress)
    : out_(path, std::ios::app), progress_(std::move(progress)) {
  if (!out_) throw InputError(path.string() + ": cannot open the log for appending");
}

namespace {

// Now in `format` (strftime's), as local or UTC time.
std::string now_as(const char* format, bool utc) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (utc) {
    gmtime_r(&now, &tm);
  } else {
    localtime_r(&now, &tm);
  }
  char text[32];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

std::string timestamp() {
  return now_as("%Y-%m-%d %H:%M:%S ", false);
}

}  // namespace

bool append_log_line(const std::filesystem::path& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << timestamp() << text::safe_text(line) << "\n" << std::flush;
  return static_cast<bool>(out);
}

void BatchLog::say(const std::string& raw_line) {
  // Lines quote input files, names and paths: one line of valid UTF-8, whatever they hold.
  const std::string line = text::safe_text(raw_line);
  if (progress_) progress_(line);
  out_ << timestamp() << line << "\n" << std::flush;
}

void TimeEstimate::finished(double units, double seconds) {
  done_units_ += units;
  done_seconds_ += seconds;
  planned_ -= units;
}

double TimeEstimate::remaining(double current_units, double current_elapsed) const {
  if (done_units_ <= 0) return -1;
  const double rate = done_seconds_ / done_units_;
  const double current_left = std::max(0.0, rate * current_units - current_elapsed);
  return rate * std::max(0.0, planned_ - current_units) + current_left;
}

std::string utc_now() {
  return now_as("%Y-%m-%dT%H:%M:%SZ", true);
}

}  // namespace cpufold
