#include "pipeline/batch/timings_file.h"

#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "io/atomic_file.h"
#include "io/directory_lock.h"
#include "pipeline/batch/chunk_sizes_json.h"

namespace cpufold {

namespace {

using Json = nlohmann::ordered_json;
using RecordFn = std::function<void(const std::string& job, std::string record)>;

constexpr std::string_view kHead = "{\n  \"jobs\": {\n";
constexpr std::string_view kTail = "  }\n}\n";
constexpr std::string_view kIndent = "    ";

// The records of a file in this class's format (kHead, one `    "job": {...}` line per job
// with a comma between, kTail), in file order; false at the first line that is not, with `fn`
// already called for the lines before it.
bool read_lines(std::istream& in, const RecordFn& fn) {
  std::string line;
  if (!std::getline(in, line) || line != "{") return false;
  if (!std::getline(in, line) || line != "  \"jobs\": {") return false;
  while (std::getline(in, line)) {
    if (line == "  }") return std::getline(in, line) && line == "}" && !std::getline(in, line);
    if (line.rfind(kIndent, 0) != 0) return false;
    std::string_view body = std::string_view(line).substr(kIndent.size());
    if (!body.empty() && body.back() == ',') body.remove_suffix(1);
    std::string object(1, '{');  // appended, not "{" + ...: GCC 12 warns (-Wrestrict) on that
    object.append(body).push_back('}');
    Json one = Json::parse(object, nullptr, false);
    if (one.is_discarded() || one.size() != 1 || !one.begin().value().is_object()) return false;
    fn(one.begin().key(), one.begin().value().dump());
  }
  return false;
}

// The records of a file in another format (an earlier cpufold's indented JSON, or edited by
// hand), parsed whole; nothing for a malformed file.
void read_whole(std::istream& in, const RecordFn& fn) {
  const Json j = Json::parse(std::istreambuf_iterator<char>(in), {}, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("jobs") || !j["jobs"].is_object()) return;
  for (const auto& [job, record] : j["jobs"].items()) {
    if (record.is_object()) fn(job, record.dump());
  }
}

// The records of `path` in file order: as a stream in this class's format, else parsed whole
// (`restart` is called before, so the caller can drop what the stream gave). Nothing for a
// missing file.
void read_records(const std::filesystem::path& path, const RecordFn& fn,
                  const std::function<void()>& restart) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  if (read_lines(in, fn)) return;
  restart();
  in.clear();
  in.seekg(0);
  read_whole(in, fn);
}

// Thrown by write()'s stream when the file is in another format: it is written again from
// the whole file.
struct OtherFormat {};

// `    "job": {...}`, the line of one record.
std::string record_line(const std::string& job, const std::string& record) {
  return std::string(kIndent) + Json(job).dump() + ": " + record;
}

}  // namespace

std::string run_timing_json(const RunTiming& r) {
  Json run;
  run["model"] = r.model;
  run["seed"] = r.seed;
  run["load_seconds"] = r.load_seconds;
  run["feature_seconds"] = r.feature_seconds;
  Json stages = Json::object();
  for (const StageTime& st : r.model_seconds) stages[st.stage] = st.seconds;
  run["model_seconds"] = stages;
  run["iterations"] = r.iterations;
  run["n_seq"] = r.n_seq;
  run["n_extra"] = r.n_extra;
  run["mean_plddt"] = r.mean_plddt;
  if (r.ptm) run["ptm"] = *r.ptm;
  run["planned_mib"] = static_cast<double>(r.planned_bytes) / (1 << 20);
  run["peak_rss_mib"] = static_cast<double>(r.peak_rss_bytes) / (1 << 20);
  run["predicted_peak_mib"] = static_cast<double>(r.predicted_peak_bytes) / (1 << 20);
  run["chunk_size"] = r.chunks.evoformer;
  run["chunk_sizes"] = r.chunks;
  return run.dump();
}

RunTiming run_timing_from_json(std::string_view text) {
  const Json j = Json::parse(text);
  const auto bytes = [&](const char* key) {
    return static_cast<std::size_t>(j.at(key).get<double>() * (1 << 20));
  };
  RunTiming r;
  r.model = j.at("model").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.load_seconds = j.at("load_seconds").get<double>();
  r.feature_seconds = j.at("feature_seconds").get<double>();
  for (const auto& [stage, seconds] : j.at("model_seconds").items())
    r.model_seconds.push_back({stage, seconds.get<double>()});
  r.iterations = j.at("iterations").get<std::int64_t>();
  r.n_seq = j.at("n_seq").get<std::int64_t>();
  r.n_extra = j.at("n_extra").get<std::int64_t>();
  r.mean_plddt = j.at("mean_plddt").get<double>();
  if (j.contains("ptm")) r.ptm = j["ptm"].get<double>();
  r.planned_bytes = bytes("planned_mib");
  r.peak_rss_bytes = bytes("peak_rss_mib");
  r.predicted_peak_bytes = bytes("predicted_peak_mib");
  r.chunks = j.at("chunk_sizes").get<ChunkSizes>();
  return r;
}

TimingsFile::TimingsFile(std::filesystem::path path) : path_(std::move(path)) {}

TimingsFile::~TimingsFile() = default;

void TimingsFile::add(const std::string& job, std::string record) {
  for (auto& [name, text] : pending_) {
    if (name == job) {
      text = std::move(record);
      return;
    }
  }
  pending_.emplace_back(job, std::move(record));
}

void TimingsFile::job_done(const std::string& job, const JobTiming& timing) {
  Json t;
  t["length"] = timing.length;
  t["msa_rows"] = timing.msa_rows;
  t["feature_seconds"] = timing.feature_seconds;
  if (timing.search_seconds) t["search_seconds"] = *timing.search_seconds;
  if (timing.templates) {
    t["templates"] = *timing.templates;
    t["template_source"] = timing.template_source;
    t["template_seconds"] = timing.template_seconds;
  }
  t["runs"] = Json::array();
  for (const RunTiming& r : timing.runs) t["runs"].push_back(Json::parse(run_timing_json(r)));
  t["status"] = "done";
  t["total_seconds"] = timing.total_seconds;
  add(job, t.dump());
}

void TimingsFile::job_failed(const std::string& job, const std::string& error) {
  add(job, Json{{"status", "failed"}, {"error", error}}.dump());
}

std::optional<TimingsFile::Record> TimingsFile::merge_job_from(const std::filesystem::path& other,
                                                               const std::string& job) {
  std::optional<std::string> found;
  read_records(
      other,
      [&](const std::string& name, std::string record) {
        if (name == job) found = std::move(record);
      },
      [&] { found.reset(); });
  if (!found) return std::nullopt;
  const Json record = Json::parse(*found);
  add(job, std::move(*found));
  return Record{record.value("status", ""), record.value("error", "")};
}

std::size_t TimingsFile::recover(
    const std::vector<std::string>& done,
    const std::function<std::filesystem::path(const std::string&)>& own_record) {
  if (done.empty()) return 0;
  const std::set<std::string> recorded = recorded_jobs();
  std::size_t recovered = 0;
  for (const std::string& job : done) {
    if (!recorded.contains(job)) recovered += merge_job_from(own_record(job), job).has_value();
  }
  return recovered;
}

std::set<std::string> TimingsFile::recorded_jobs() const {
  std::set<std::string> jobs;
  read_records(
      path_, [&](const std::string& job, std::string) { jobs.insert(job); }, [&] { jobs.clear(); });
  return jobs;
}

void TimingsFile::write() {
  const DirectoryLock lock(path_.parent_path());
  // What other runs wrote since, with this object's records in place of theirs, streamed from
  // the file as it is to its replacement: one record in memory at a time.
  std::unordered_map<std::string_view, std::size_t> mine;
  for (std::size_t i = 0; i < pending_.size(); ++i) mine.emplace(pending_[i].first, i);
  const auto produce = [&](bool whole) {
    return [&, whole](const PieceWriter& put) {
      std::vector<bool> placed(pending_.size(), false);
      std::size_t records = 0;
      const auto append = [&](const std::string& job, const std::string& record) {
        if (records++ > 0) put(",\n");
        put(record_line(job, record));
      };
      const RecordFn each = [&](const std::string& job, std::string record) {
        const auto it = mine.find(job);
        if (it == mine.end()) return append(job, record);
        if (placed[it->second]) return;  // a job listed twice: once is enough
        placed[it->second] = true;
        append(job, pending_[it->second].second);
      };
      put(kHead);
      if (std::ifstream in(path_, std::ios::binary); in) {
        if (whole) {
          read_whole(in, each);
        } else if (!read_lines(in, each)) {
          throw OtherFormat{};
        }
      }
      for (std::size_t i = 0; i < pending_.size(); ++i) {
        if (!placed[i]) append(pending_[i].first, pending_[i].second);
      }
      if (records > 0) put("\n");
      put(kTail);
    };
  };
  try {
    write_file_atomically(path_, produce(false));
  } catch (const OtherFormat&) {
    write_file_atomically(path_, produce(true));
  }
  pending_.clear();
  pending_.shrink_to_fit();
}

}  // namespace cpufold
