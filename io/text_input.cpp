#include "io/text_input.h"

#include "memory/error.h"

namespace cpufold::text {

Lines::Lines(std::string_view text) : rest_(text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (rest_.substr(0, kBom.size()) == kBom) rest_.remove_prefix(kBom.size());
}

bool Lines::next(std::string_view& line) {
  if (rest_.empty()) return false;
  const std::size_t end = rest_.find_first_of("\r\n");
  ++number_;
  if (end == std::string_view::npos) {
    line = rest_;
    rest_ = {};
    return true;
  }
  line = rest_.substr(0, end);
  const bool crlf = rest_[end] == '\r' && end + 1 < rest_.size() && rest_[end + 1] == '\n';
  rest_.remove_prefix(end + (crlf ? 2 : 1));
  return true;
}

void check_text_encoding(std::string_view text, const std::string& source_name) {
  const auto starts = [&](std::string_view bom) { return text.substr(0, bom.size()) == bom; };
  const char* encoding = nullptr;
  // UTF-32 LE first: its mark begins with UTF-16 LE's.
  if (starts(std::string_view("\xFF\xFE\0\0", 4)) || starts(std::string_view("\0\0\xFE\xFF", 4))) {
    encoding = "UTF-32";
  } else if (starts("\xFF\xFE") || starts("\xFE\xFF")) {
    encoding = "UTF-16";
  }
  if (encoding) {
    throw InputError(located(source_name, 1,
                             std::string("the file is ") + encoding +
                                 " text (it starts with that byte-order mark); save it as "
                                 "UTF-8 or plain ASCII"));
  }
}

}  // namespace cpufold::text
