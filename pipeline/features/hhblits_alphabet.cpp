#include "pipeline/features/hhblits_alphabet.h"

#include <string_view>

namespace cpufold {

int hhblits_id(char letter) {
  // The 20 amino acids in one-letter alphabetical order; the rest are HHblits' aliases.
  static constexpr std::string_view kHhblits = "ACDEFGHIKLMNPQRSTVWY";
  switch (letter) {
    case 'B':
      return 2;  // D
    case 'Z':
      return 3;  // E
    case 'U':
      return 1;  // C
    case 'J':
    case 'O':
    case 'X':
      return 20;
    case '-':
      return kMsaGapToken;
    default:
      break;
  }
  const auto pos = kHhblits.find(letter);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

int af2_restype(char letter) {
  if (letter < 'A' || letter > 'Z') return -1;
  const auto pos = std::string_view(kAf2Restypes, 20).find(letter);
  return pos == std::string_view::npos ? kAf2UnknownRestype : static_cast<int>(pos);
}

}  // namespace cpufold
