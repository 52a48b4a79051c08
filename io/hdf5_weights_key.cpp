// The reversible escape that turns an AF2 key into one HDF5 link name (see hdf5_weights.h).
#include "io/hdf5_weights.h"
#include "memory/error.h"

namespace cpufold {

std::string encode_hdf5_key(std::string_view key) {
  if (key.empty()) throw InternalError("encode_hdf5_key: empty parameter name");
  if (key == ".") return "%2E";  // "." alone names the group itself in HDF5
  std::string out;
  out.reserve(key.size() + 16);
  for (char c : key) {
    if (c == '%') {
      out += "%25";
    } else if (c == '/') {
      out += "%2F";
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> decode_hdf5_key(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') {
      out += name[i];
      continue;
    }
    const std::string_view code = name.substr(i + 1, 2);
    if (code == "25") {
      out += '%';
    } else if (code == "2F") {
      out += '/';
    } else if (code == "2E") {
      out += '.';
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace cpufold
