#include "pipeline/batch/batch_record.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "pipeline/batch/chunk_sizes_json.h"

namespace cpufold {
namespace {

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

nlohmann::ordered_json search_json(const SearchTaskRecord& s) {
  nlohmann::ordered_json o;
  o["status"] = s.status;
  if (!s.cores.empty()) o["cores"] = s.cores;
  if (s.start_seconds >= 0) o["start_seconds"] = s.start_seconds;
  if (s.end_seconds >= 0) o["seconds"] = s.end_seconds - s.start_seconds;
  o["counted_mib"] = mib(s.counted_bytes);
  if (s.measured_peak_bytes > 0) o["measured_peak_mib"] = mib(s.measured_peak_bytes);
  if (s.jobs > 1) o["jobs_in_task"] = s.jobs;
  if (!s.exit.empty()) o["exit"] = s.exit;
  return o;
}

nlohmann::ordered_json job_json(const InstanceJobRecord& j) {
  nlohmann::ordered_json o;
  o["name"] = j.name;
  o["status"] = j.status;
  o["length"] = j.length;
  if (j.instance > 0) {
    o["instance"] = j.instance;
    o["cores"] = j.cores;
    o["threads"] = j.threads;
    if (j.numa_node >= 0) o["numa_node"] = j.numa_node;
    o["attempts"] = j.attempts;
    o["start"] = j.start_time;
    if (!j.end_time.empty()) o["end"] = j.end_time;
    o["start_seconds"] = j.start_seconds;
    if (j.end_seconds >= 0) o["seconds"] = j.end_seconds - j.start_seconds;
  }
  o["predicted_seconds"] = j.predicted_seconds;
  o["predicted_peak_mib"] = mib(j.predicted_peak_bytes);
  if (j.measured_peak_bytes > 0) o["measured_peak_mib"] = mib(j.measured_peak_bytes);
  if (j.budget_bytes > 0) {
    o["plan"] = {{"budget_mib", mib(j.budget_bytes)},
                 {"chunk_sizes", j.chunks},
                 {"lean", j.lean},
                 {"spilled", j.spilled}};
  }
  if (!j.exit.empty()) o["exit"] = j.exit;
  if (!j.message.empty()) o["message"] = j.message;
  if (!j.search.status.empty()) o["search"] = search_json(j.search);
  return o;
}

}  // namespace

void write_batch_record(const std::filesystem::path& path, const InstanceBatchRecord& record) {
  nlohmann::ordered_json j;
  j["instances"] = record.instances;
  j["threads_per_instance"] = record.threads_per_instance;
  j["layout"] = record.layout_reason;
  j["memory_budget_mib"] = mib(record.budget_bytes);
  j["memory_budget_source"] = record.budget_source;
  j["jobs"] = nlohmann::ordered_json::array();
  for (const InstanceJobRecord& job : record.jobs) j["jobs"].push_back(job_json(job));
  write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace cpufold
