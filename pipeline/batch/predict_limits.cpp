#include "pipeline/batch/predict_limits.h"

#include "memory/error.h"

namespace cpufold {

std::string integer_range_text(std::int64_t min, std::int64_t max, std::string_view why) {
  std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!why.empty()) range += " (" + std::string(why) + ")";
  return range;
}

void require_in_range(const IntegerRange& range, std::int64_t value) {
  if (value >= range.min && value <= range.max) return;
  throw InputError(std::string(range.option) + ": '" + std::to_string(value) +
                   "' is out of range: expected " + integer_range_text(range.min, range.max));
}

}  // namespace cpufold
