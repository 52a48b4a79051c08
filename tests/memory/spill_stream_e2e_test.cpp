// A file-tier arena streamed slab by slab (tests/bench/spill_stream.cpp) keeps about one slab
// resident, so it completes in a cgroup smaller than the arena; without eviction the whole
// arena is resident, which shows that the measure can tell the two apart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::run_command;
using testing::ScratchDir;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::string stream_command(const ScratchDir& dir, int arena_mib, int slab_mib, bool evict) {
  return std::string("'" CPUFOLD_SPILL_STREAM "' '")
      .append(dir.path().string())
      .append("' " + std::to_string(arena_mib) + " " + std::to_string(slab_mib))
      .append(evict ? "" : " --no-evict");
}

std::size_t peak_rss_mib(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex("peak RSS ([0-9]+) MiB"))) return 0;
  return std::stoul(m[1].str());
}

TEST(SpillStreamE2eTest, StreamingAFileArenaKeepsAboutOneSlabResident) {
  const ScratchDir dir;
  const auto evicted = run_command(stream_command(dir, 96, 4, true));
  ASSERT_EQ(evicted.exit_code, 0) << evicted.output;
  EXPECT_GT(peak_rss_mib(evicted.output), 0u) << evicted.output;
  EXPECT_LT(peak_rss_mib(evicted.output), 32u) << evicted.output;

  const auto kept = run_command(stream_command(dir, 96, 4, false));
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_GE(peak_rss_mib(kept.output), 96u) << kept.output;
}

// The cgroup also charges the page cache, which eviction must empty too.
TEST(SpillStreamE2eTest, AFileArenaLargerThanTheCgroupLimitCompletesUnderIt) {
  const auto tool = testing::memlimit_tool();
  if (!tool) GTEST_SKIP() << "no memlimit tool (CPUFOLD_REFERENCE_DIR/../tools) or no cgroups";
  const ScratchDir dir;
  const auto json = dir / "memlimit.json";
  const auto run = [&](const char* limit, bool evict) {
    const auto r = run_command("MEMLIMIT_JSON='" + json.string() + "' '" + tool->string() + "' " +
                               limit + " " + stream_command(dir, 192, 8, evict));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(testing::read_file(json));
  };
  const auto evicted = run("64M", true);
  EXPECT_EQ(evicted["oom_kill"], 0) << evicted;
  EXPECT_LT(evicted["peak_bytes"].get<std::size_t>(), 48 * kMiB) << evicted;

  const auto kept = run("512M", false);
  EXPECT_GE(kept["peak_bytes"].get<std::size_t>(), 192 * kMiB) << kept;
}

}  // namespace
}  // namespace cpufold
