#include "pipeline/cli/option_checks.h"

#include <unistd.h>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "memory/byte_size.h"
#include "memory/error.h"

namespace cpufold {
namespace {

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

// The shortest text that reads back as `value`: "100", not "1e+02" or "100.000000".
std::string shortest(double value) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

std::string real_range(double min, double max) {
  return "a number from " + shortest(min) + " to " + shortest(max);
}

// Strict decimal integer: an optional sign, digits, nothing else. The error (without the option
// name) or the value.
std::optional<std::string> integer_error(std::string_view text, std::int64_t min, std::int64_t max,
                                         std::string_view why, std::int64_t& value) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits.front() == '+') digits.remove_prefix(1);
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return quoted(text) + " is out of range: expected " + integer_range_text(min, max, why);
  }
  if (ec != std::errc() || ptr != end || digits.empty()) {
    return quoted(text) + " is not an integer: expected " + integer_range_text(min, max, why);
  }
  if (value < min || value > max) {
    return quoted(text) + " is out of range: expected " + integer_range_text(min, max, why);
  }
  return std::nullopt;
}

std::optional<std::string> real_error(std::string_view text, double min, double max,
                                      double& value) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits.front() == '+') digits.remove_prefix(1);
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    return quoted(text) + " is out of range: expected " + real_range(min, max);
  }
  if (ec != std::errc() || ptr != end || digits.empty()) {
    return quoted(text) + " is not a number: expected " + real_range(min, max);
  }
  if (!std::isfinite(value)) {
    return quoted(text) + " is not a finite number: expected " + real_range(min, max);
  }
  if (value < min || value > max) {
    return quoted(text) + " is out of range: expected " + real_range(min, max);
  }
  return std::nullopt;
}

std::optional<std::string> model_order_error(std::string_view text, std::vector<int>& order) {
  const std::string expected =
      ": expected distinct AlphaFold2 model numbers 1 to 5 separated by commas, like 1,2,3,4,5";
  order.clear();
  std::set<int> seen;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::int64_t model = 0;
    if (integer_error(item, kModelNumberRange.min, kModelNumberRange.max, {}, model)) {
      const std::string what = item.empty()   ? " has an empty entry"
                               : item == text ? " is not a model number"
                                              : ": " + quoted(item) + " is not a model number";
      return quoted(text) + what + expected;
    }
    if (!seen.insert(static_cast<int>(model)).second) {
      return quoted(text) + " lists model " + std::to_string(model) + " twice" + expected;
    }
    order.push_back(static_cast<int>(model));
    if (comma == std::string_view::npos) return std::nullopt;
    start = comma + 1;
  }
}

[[noreturn]] void refuse(std::string_view option, const std::string& error) {
  throw InputError(std::string(option) + ": " + error);
}

}  // namespace

int max_threads() {
  const unsigned hardware = std::thread::hardware_concurrency();
  return 4 * static_cast<int>(hardware > 0 ? hardware : 1);
}

std::string max_threads_reason() {
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? "4 x the " + std::to_string(hardware) + " hardware threads of this machine"
                      : "the number of hardware threads is unknown";
}

std::int64_t parse_integer(std::string_view option, std::string_view text, std::int64_t min,
                           std::int64_t max, std::string_view why) {
  std::int64_t value = 0;
  if (auto error = integer_error(text, min, max, why, value)) refuse(option, *error);
  return value;
}

double parse_real(std::string_view option, std::string_view text, double min, double max) {
  double value = 0;
  if (auto error = real_error(text, min, max, value)) refuse(option, *error);
  return value;
}

std::vector<int> parse_model_order(std::string_view option, std::string_view text) {
  std::vector<int> order;
  if (auto error = model_order_error(text, order)) refuse(option, *error);
  return order;
}

CLI::Validator integer_in(std::int64_t min, std::int64_t max, std::string why) {
  return CLI::Validator(
      [min, max, why](std::string& text) {
        std::int64_t value = 0;
        if (auto error = integer_error(text, min, max, why, value)) return *error;
        text = std::to_string(value);
        return std::string();
      },
      std::to_string(min) + ".." + std::to_string(max));
}

CLI::Validator integer_in(const IntegerRange& range) {
  return integer_in(range.min, range.max);
}

CLI::Validator real_in(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        double value = 0;
        if (auto error = real_error(text, min, max, value)) return *error;
        char canonical[32];
        std::snprintf(canonical, sizeof canonical, "%.17g", value);
        text = canonical;
        return std::string();
      },
      shortest(min) + ".." + shortest(max));
}

CLI::Validator thread_count() {
  return integer_in(1, max_threads(), max_threads_reason());
}

CLI::Validator byte_size() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          text = std::to_string(parse_byte_size(text, "value"));
        } catch (const InputError& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      "SIZE");
}

CLI::Validator model_order_list() {
  return CLI::Validator(
      [](std::string& text) {
        std::vector<int> order;
        if (auto error = model_order_error(text, order)) return *error;
        return std::string();
      },
      "");
}

CLI::Validator writable_directory_option() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        const std::filesystem::path dir(text);
        if (!std::filesystem::is_directory(dir, ec)) {
          return "'" + text + "' is not an existing directory: create it first";
        }
        if (::access(dir.c_str(), W_OK | X_OK) != 0) {
          return "cannot create files in '" + text + "' (" + std::strerror(errno) +
                 "): choose a writable directory";
        }
        return "";
      },
      "DIR");
}

CLI::Validator output_file_option() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        const std::filesystem::path file(text);
        if (std::filesystem::is_directory(file, ec)) {
          return "'" + text + "' is a directory: give a file name, e.g. '" +
                 (file / "outputs.h5").string() + "'";
        }
        const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
        if (!std::filesystem::is_directory(dir, ec))
          return "the directory of '" + text + "' does not exist: create it first";
        if (::access(dir.c_str(), W_OK | X_OK) != 0) {
          return "cannot create files in '" + dir.string() + "' (" + std::strerror(errno) +
                 "): choose a writable directory";
        }
        return "";
      },
      "FILE");
}

CLI::Validator output_directory_option() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        if (std::filesystem::exists(text, ec) && !std::filesystem::is_directory(text, ec))
          return "'" + text + "' exists and is not a directory: give a directory";
        return "";
      },
      "DIR");
}

}  // namespace cpufold
