#include "pipeline/batch/profile_record.h"

#include <nlohmann/json.hpp>

namespace cpufold {

std::string profile_record(std::string_view tag, const LengthProfile& p) {
  nlohmann::json j = {{"n_res", p.n_res},
                      {"msa_rows", p.msa_rows},
                      {"extra_rows", p.extra_rows},
                      {"templates", p.templates},
                      {"recycles", p.recycles},
                      {"planned", p.planned},
                      {"chunk", p.chunk},
                      {"predicted_peak_bytes", p.predicted_peak_bytes},
                      {"ok", p.ok},
                      {"error", p.error},
                      {"measured_peak_bytes", p.measured_peak_bytes},
                      {"stage_method", p.stage_method},
                      {"blocks", nlohmann::json::array()},
                      {"stages", nlohmann::json::array()}};
  for (const PlannedBlock& b : p.blocks)
    j["blocks"].push_back({{"name", b.name}, {"bytes", b.bytes}});
  for (const StagePeak& s : p.stages) {
    j["stages"].push_back({{"name", s.name}, {"peak_bytes", s.peak_bytes}, {"seconds", s.seconds}});
  }
  return std::string(tag) + j.dump() + "\n";
}

std::optional<LengthProfile> parse_profile_record(std::string_view tag, std::string_view line) {
  if (!line.starts_with(tag)) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(line.substr(tag.size()));
    LengthProfile p;
    j.at("n_res").get_to(p.n_res);
    j.at("msa_rows").get_to(p.msa_rows);
    j.at("extra_rows").get_to(p.extra_rows);
    j.at("templates").get_to(p.templates);
    j.at("recycles").get_to(p.recycles);
    j.at("planned").get_to(p.planned);
    j.at("chunk").get_to(p.chunk);
    j.at("predicted_peak_bytes").get_to(p.predicted_peak_bytes);
    j.at("ok").get_to(p.ok);
    j.at("error").get_to(p.error);
    j.at("measured_peak_bytes").get_to(p.measured_peak_bytes);
    j.at("stage_method").get_to(p.stage_method);
    for (const auto& b : j.at("blocks"))
      p.blocks.push_back({b.at("name").get<std::string>(), b.at("bytes").get<std::size_t>()});
    for (const auto& s : j.at("stages")) {
      p.stages.push_back({s.at("name").get<std::string>(), s.at("peak_bytes").get<std::size_t>(),
                          s.at("seconds").get<double>()});
    }
    return p;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace cpufold
