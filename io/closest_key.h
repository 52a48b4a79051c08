// "Did you mean ...?" for parameter names: the nearest key by edit distance.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cpufold {

// The candidate nearest to `key` (Levenshtein distance), if it is near enough to be a likely
// typo or a missing/extra prefix; nullopt otherwise. Meant for error paths only.
std::optional<std::string> closest_key(std::string_view key,
                                       const std::vector<std::string>& candidates);

}  // namespace cpufold
