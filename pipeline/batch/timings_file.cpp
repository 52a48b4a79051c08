#include "pipeline/batch/timings_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "pipeline/batch/chunk_sizes_json.h"

namespace cpufold {

struct TimingsFile::Json {
  nlohmann::ordered_json value;
};

TimingsFile::TimingsFile(std::filesystem::path path)
    : path_(std::move(path)), json_(std::make_unique<Json>()) {
  std::ifstream in(path_, std::ios::binary);
  const std::string old = in ? std::string(std::istreambuf_iterator<char>(in), {}) : "";
  auto& j = json_->value;
  j = nlohmann::ordered_json::parse(old, nullptr, false);
  if (j.is_discarded() || !j.is_object()) j = nlohmann::ordered_json::object();
  if (!j.contains("jobs") || !j["jobs"].is_object()) j["jobs"] = nlohmann::ordered_json::object();
}

TimingsFile::~TimingsFile() = default;

void TimingsFile::job_done(const std::string& job, const JobTiming& timing) {
  using Json = nlohmann::ordered_json;
  Json t;
  t["length"] = timing.length;
  t["msa_rows"] = timing.msa_rows;
  t["feature_seconds"] = timing.feature_seconds;
  t["runs"] = Json::array();
  for (const RunTiming& r : timing.runs) {
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
    t["runs"].push_back(run);
  }
  t["status"] = "done";
  t["total_seconds"] = timing.total_seconds;
  json_->value["jobs"][job] = t;
  touched_.insert(job);
}

void TimingsFile::job_failed(const std::string& job, const std::string& error) {
  json_->value["jobs"][job] = nlohmann::ordered_json{{"status", "failed"}, {"error", error}};
  touched_.insert(job);
}

std::optional<TimingsFile::Record> TimingsFile::merge_job_from(const std::filesystem::path& other,
                                                               const std::string& job) {
  const TimingsFile theirs(other);
  const auto& jobs = theirs.json_->value["jobs"];
  if (!jobs.contains(job) || !jobs[job].is_object()) return std::nullopt;
  const auto& record = jobs[job];
  json_->value["jobs"][job] = record;
  touched_.insert(job);
  return Record{record.value("status", ""), record.value("error", "")};
}

namespace {

// An exclusive flock on the file's directory for the scope: no lock file among the outputs.
// Without one (the directory cannot be opened) the write still happens, as before locks.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path)
      : fd_(::open(
            (path.has_parent_path() ? path.parent_path() : std::filesystem::path(".")).c_str(),
            O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

void TimingsFile::write() const {
  const FileLock lock(path_);
  TimingsFile now(path_);  // what other runs wrote since this one read the file
  auto& jobs = now.json_->value["jobs"];
  for (const std::string& job : touched_) jobs[job] = json_->value["jobs"][job];
  write_file_atomically(path_, now.json_->value.dump(2) + "\n");
}

}  // namespace cpufold
