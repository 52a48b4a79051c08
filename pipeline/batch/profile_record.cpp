#include "pipeline/batch/profile_record.h"

#include <nlohmann/json.hpp>

#include "pipeline/batch/chunk_sizes_json.h"

namespace cpufold {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfileSizes, n_res, msa_rows, extra_rows, templates, recycles)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlannedBlock, name, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StagePeak, name, peak_bytes, seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LengthProfile, sizes, planned, chunks, predicted_peak_bytes,
                                   blocks, ok, error, measured_peak_bytes, stages, stage_method)

std::string profile_record(std::string_view tag, const LengthProfile& p) {
  return std::string(tag) + nlohmann::json(p).dump() + "\n";
}

std::optional<LengthProfile> parse_profile_record(std::string_view tag, std::string_view line) {
  if (!line.starts_with(tag)) return std::nullopt;
  try {
    return nlohmann::json::parse(line.substr(tag.size())).get<LengthProfile>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace cpufold
