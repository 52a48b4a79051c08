#include "pipeline/batch/job_search.h"

#include <cstdio>
#include <filesystem>

#include "pipeline/batch/msa_source.h"
#include "pipeline/search/msa_search.h"
#include "pipeline/search/search_databases.h"

namespace cpufold {

void check_search_options(const PredictOptions& o) {
  if (o.databases.empty()) return;
  plan_search(parse_search_method(o.search_method), o.databases);
}

namespace {

bool search_wanted(const PredictOptions& o, const MsaSources& sources, const PredictJob& job) {
  return job.error.empty() && !job_done_already(o, job.name) &&
         job_msa_source(job, sources) == MsaSource::searched;
}

}  // namespace

std::set<std::string> jobs_to_search(const PredictOptions& o, const std::vector<PredictJob>& jobs) {
  std::set<std::string> names;
  const MsaSources sources = msa_sources(o);
  if (sources.searched_dir.empty()) return names;
  const SearchPlan plan = plan_search(parse_search_method(o.search_method), o.databases);
  for (const PredictJob& job : jobs) {
    if (!search_wanted(o, sources, job)) continue;
    std::error_code ec;
    for (const std::filesystem::path& f : search_outputs(plan, sources.searched_dir, job.name)) {
      if (!std::filesystem::is_regular_file(f, ec)) {
        names.insert(job.name);
        break;
      }
    }
  }
  return names;
}

std::map<std::string, double> search_job_msas(const PredictOptions& o,
                                              const std::vector<PredictJob>& jobs,
                                              const std::function<void(const std::string&)>& say) {
  std::map<std::string, double> seconds;
  const MsaSources sources = msa_sources(o);
  if (sources.searched_dir.empty()) return seconds;
  std::vector<SearchQuery> queries;
  for (const PredictJob& job : jobs) {
    if (search_wanted(o, sources, job)) queries.push_back({job.name, job.sequence});
  }
  if (queries.empty()) return seconds;

  const SearchMethod method = parse_search_method(o.search_method);
  const SearchPlan plan = plan_search(method, o.databases);
  if (!plan.missing.empty()) {
    std::string missing;
    for (const std::string& m : plan.missing) missing += (missing.empty() ? "" : ", ") + m;
    say("search: not found in " + o.databases.string() + ", searched without: " + missing);
  }
  std::filesystem::create_directories(sources.searched_dir);
  SearchOptions options;
  options.msa_dir = sources.searched_dir;
  options.threads = o.threads;
  options.say = say;
  const SearchSummary summary = search_msas(queries, plan, options);
  for (std::size_t i = 0; i < queries.size() && i < summary.files.size(); ++i) {
    double s = 0;
    for (const SearchedFile& f : summary.files[i]) s += f.seconds;
    seconds[queries[i].name] = s;
  }
  char line[160];
  std::snprintf(line, sizeof line,
                "search: %zu job(s) searched, %zu kept from an earlier run, in %.1f s (%s)",
                summary.searched, summary.skipped, summary.seconds, search_method_name(method));
  say(line);
  return seconds;
}

}  // namespace cpufold
