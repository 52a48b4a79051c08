#include "pipeline/batch/job_search.h"

#include <cstdio>
#include <filesystem>

#include "memory/error.h"
#include "pipeline/batch/msa_source.h"
#include "pipeline/search/external_program.h"
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

namespace {

// What search_job_msas and search_each_job share: the queries to search and how.
struct BatchSearch {
  std::vector<SearchQuery> queries;
  std::vector<std::size_t> job_of;  // index into the jobs, per query
  SearchMethod method = SearchMethod::jackhmmer;
  SearchPlan plan;
  SearchOptions options;
};

// Empty queries: nothing to search. Says once which databases DIR lacks.
BatchSearch batch_search(const PredictOptions& o, const std::vector<PredictJob>& jobs,
                         const std::function<void(const std::string&)>& say) {
  BatchSearch b;
  const MsaSources sources = msa_sources(o);
  if (sources.searched_dir.empty()) return b;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (search_wanted(o, sources, jobs[i])) {
      b.queries.push_back({jobs[i].name, jobs[i].sequence});
      b.job_of.push_back(i);
    }
  }
  if (b.queries.empty()) return b;
  b.method = parse_search_method(o.search_method);
  b.plan = plan_search(b.method, o.databases);
  if (!b.plan.missing.empty()) {
    std::string missing;
    for (const std::string& m : b.plan.missing) missing += (missing.empty() ? "" : ", ") + m;
    say("search: not found in " + o.databases.string() + ", searched without: " + missing);
  }
  std::filesystem::create_directories(sources.searched_dir);
  b.options.msa_dir = sources.searched_dir;
  b.options.threads = o.threads;
  b.options.say = say;
  return b;
}

void add_seconds(const std::vector<SearchQuery>& queries, const SearchSummary& summary,
                 std::map<std::string, double>& seconds) {
  for (std::size_t i = 0; i < queries.size() && i < summary.files.size(); ++i) {
    double s = 0;
    for (const SearchedFile& f : summary.files[i]) s += f.seconds;
    seconds[queries[i].name] = s;
  }
}

std::string summary_line(std::size_t searched, std::size_t kept, std::size_t failed, double seconds,
                         SearchMethod method) {
  char time[64];
  std::snprintf(time, sizeof time, "in %.1f s (%s)", seconds, search_method_name(method));
  return "search: " + std::to_string(searched) + " job(s) searched, " + std::to_string(kept) +
         " kept from an earlier run, " +
         (failed > 0 ? std::to_string(failed) + " failed, " : std::string()) + time;
}

}  // namespace

std::map<std::string, double> search_job_msas(const PredictOptions& o,
                                              const std::vector<PredictJob>& jobs,
                                              const std::function<void(const std::string&)>& say) {
  std::map<std::string, double> seconds;
  const BatchSearch b = batch_search(o, jobs, say);
  if (b.queries.empty()) return seconds;
  const SearchSummary summary = search_msas(b.queries, b.plan, b.options);
  add_seconds(b.queries, summary, seconds);
  say(summary_line(summary.searched, summary.skipped, 0, summary.seconds, b.method));
  return seconds;
}

std::map<std::string, double> search_each_job(const PredictOptions& o,
                                              std::vector<PredictJob>& jobs,
                                              const std::function<void(const std::string&)>& say) {
  std::map<std::string, double> seconds;
  const BatchSearch b = batch_search(o, jobs, say);
  if (b.queries.empty()) return seconds;
  // The queries of each search_msas call: one each, or all together with mmseqs2.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t q = 0; q < b.queries.size(); ++q) {
    if (b.method != SearchMethod::mmseqs2 || groups.empty()) groups.emplace_back();
    groups.back().push_back(q);
  }
  std::size_t searched = 0, kept = 0, failed = 0;
  double total = 0;
  for (const std::vector<std::size_t>& group : groups) {
    std::vector<SearchQuery> queries;
    for (std::size_t q : group) queries.push_back(b.queries[q]);
    const auto fail = [&](const std::string& why, PredictJob::ErrorKind kind) {
      for (std::size_t q : group) {
        jobs[b.job_of[q]].error = "search: " + why;
        jobs[b.job_of[q]].error_kind = kind;
      }
      failed += group.size();
      say("search failed for " + queries.front().name +
          (group.size() > 1 ? " and " + std::to_string(group.size() - 1) + " other job(s)" : "") +
          ": " + why);
    };
    try {
      SearchOptions options = b.options;
      options.first = group.front();
      options.of = b.queries.size();
      const SearchSummary summary = search_msas(queries, b.plan, options);
      add_seconds(queries, summary, seconds);
      searched += summary.searched;
      kept += summary.skipped;
      total += summary.seconds;
    } catch (const ExternalProgramError& e) {
      fail(e.what(), PredictJob::ErrorKind::program);
    } catch (const BudgetError& e) {
      fail(e.what(), PredictJob::ErrorKind::memory);
    }
  }
  say(summary_line(searched, kept, failed, total, b.method));
  return seconds;
}

}  // namespace cpufold
