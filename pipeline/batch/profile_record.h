// How a `cpufold profile` child hands its measurements to the parent: one line on stdout per
// record, a fixed tag then JSON, so that the child's own messages can share the stream.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/runner/length_profile.h"

namespace cpufold {

inline constexpr std::string_view kProfilePlanTag = "cpufold-profile-plan ";
inline constexpr std::string_view kProfileResultTag = "cpufold-profile-result ";
inline constexpr std::string_view kProfileBlockTag = "cpufold-profile-block ";  // --blocks-only

// `tag` then the profile as one line of JSON, ending in '\n'.
std::string profile_record(std::string_view tag, const LengthProfile& p);
// The profile of a line that starts with `tag`; nullopt for any other line (or bad JSON).
std::optional<LengthProfile> parse_profile_record(std::string_view tag, std::string_view line);

// kProfileBlockTag then one block, as it ends; and back.
std::string profile_block_record(const ProfiledBlock& b);
std::optional<ProfiledBlock> parse_profile_block_record(std::string_view line);

}  // namespace cpufold
