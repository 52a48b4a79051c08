// Peak resident memory and wall time per stage of a run, for `cpufold profile`. The kernel's
// own high-water mark (VmHWM) is reset as each stage begins (writing "5" to
// /proc/self/clear_refs, Linux >= 4.0), so each stage's VmHWM is its own; where the kernel
// refuses that, a thread samples the resident size instead (and can miss a brief peak).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cpufold {

struct StagePeak {
  std::string name;
  std::size_t peak_bytes = 0;  // the most resident at any time in the stage
  double seconds = 0;          // wall time, summed over the stage's occurrences
};

class StageMeter {
 public:
  enum class Method { clear_refs, sampled };

  // Uses clear_refs when this kernel accepts it, unless `force` says otherwise.
  explicit StageMeter(std::optional<Method> force = {});
  ~StageMeter();
  StageMeter(const StageMeter&) = delete;
  StageMeter& operator=(const StageMeter&) = delete;

  // Ends the current stage (if any) and starts `name`; a name seen before adds to that stage
  // (the larger peak, the summed time).
  void begin(std::string_view name);
  // Ends the current stage.
  void end();

  Method method() const { return method_; }
  static const char* method_name(Method m);
  // In the order first begun.
  const std::vector<StagePeak>& stages() const { return stages_; }
  // The largest stage peak: the process's peak over every measured stage.
  std::size_t peak_bytes() const;

 private:
  std::size_t take_peak();  // the current stage's peak; restarts the measurement
  void sample_loop(std::stop_token stop);

  Method method_;
  std::vector<StagePeak> stages_;
  std::optional<std::size_t> current_;  // index into stages_
  std::chrono::steady_clock::time_point started_;
  std::atomic<std::size_t> sampled_peak_{0};
  std::jthread sampler_;
};

// Resets this process's VmHWM to its current resident size; false when the kernel refuses.
bool reset_peak_rss();

}  // namespace cpufold
