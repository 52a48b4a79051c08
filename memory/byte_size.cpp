#include "memory/byte_size.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memory/error.h"

namespace cpufold {

std::size_t parse_byte_size(std::string_view text, std::string_view what) {
  const auto refuse = [&] {
    return InputError(std::string(what) + ": '" + std::string(text) +
                      "' is not a memory size; write e.g. 1.5G, 800M or 2048M (binary units K, "
                      "M, G, T; no unit: bytes)");
  };
  const auto too_large = [&] {
    return InputError(
        std::string(what) + ": '" + std::string(text.substr(0, 24)) +
        (text.size() > 24 ? "...' (" + std::to_string(text.size()) + " characters)" : "'") +
        " is out of range (more than 8 EiB); give a size such as 64G");
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  const std::string number(text.substr(0, i));
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) throw refuse();
  // strtod, not stod: a number past the range of double (400 digits) is an input to refuse,
  // not an exception from the library.
  errno = 0;
  const double value = std::strtod(number.c_str(), nullptr);
  if (errno == ERANGE && value != 0) throw too_large();
  std::string_view unit = text.substr(i);
  double scale = 1;
  if (!unit.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    const std::string_view units = "KMGT";
    const auto pos = units.find(u);
    if (pos != std::string_view::npos) {
      scale = std::pow(1024.0, static_cast<double>(pos + 1));
      unit.remove_prefix(1);
      if (!unit.empty() && (unit[0] == 'i' || unit[0] == 'I')) unit.remove_prefix(1);
    }
    if (!unit.empty() && (unit[0] == 'B' || unit[0] == 'b')) unit.remove_prefix(1);
    if (!unit.empty()) throw refuse();
  }
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes >= 0x1p63) throw too_large();
  if (bytes < 1) {
    throw InputError(std::string(what) + ": '" + std::string(text) + "' is zero; give a size");
  }
  return static_cast<std::size_t>(std::ceil(bytes));
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 5) {
    value /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  } else {
    std::snprintf(buf, sizeof buf,
                  value < 10    ? "%.2f %s"
                  : value < 100 ? "%.1f %s"
                                : "%.0f %s",
                  value, units[u]);
  }
  return buf;
}

std::string slurm_mem(std::size_t bytes) {
  const std::size_t mib = (bytes + (std::size_t{1} << 20) - 1) >> 20;
  return std::to_string(mib) + "M";
}

}  // namespace cpufold
