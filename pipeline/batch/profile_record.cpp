#include "pipeline/batch/profile_record.h"

#include <nlohmann/json.hpp>

#include "pipeline/batch/chunk_sizes_json.h"

namespace cpufold {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfileSizes, n_res, msa_rows, extra_rows, templates, recycles)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlannedBlock, name, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StagePeak, name, peak_bytes, seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BlockPeak, resident, activations, scratch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfiledBlock, name, n_seq, chunk, predicted, ran,
                                   measured_peak_bytes, seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LengthProfile, sizes, blocks_only, planned, chunks,
                                   predicted_peak_bytes, plan_peak_bytes, blocks, block_runs, ok,
                                   error, measured_peak_bytes, stages, stage_method)

namespace {

template <typename T>
std::optional<T> parse_record(std::string_view tag, std::string_view line) {
  if (!line.starts_with(tag)) return std::nullopt;
  try {
    return nlohmann::json::parse(line.substr(tag.size())).get<T>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string profile_record(std::string_view tag, const LengthProfile& p) {
  return std::string(tag) + nlohmann::json(p).dump() + "\n";
}

std::optional<LengthProfile> parse_profile_record(std::string_view tag, std::string_view line) {
  return parse_record<LengthProfile>(tag, line);
}

std::string profile_block_record(const ProfiledBlock& b) {
  return std::string(kProfileBlockTag) + nlohmann::json(b).dump() + "\n";
}

std::optional<ProfiledBlock> parse_profile_block_record(std::string_view line) {
  return parse_record<ProfiledBlock>(kProfileBlockTag, line);
}

}  // namespace cpufold
