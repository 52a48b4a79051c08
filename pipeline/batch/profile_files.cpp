#include "pipeline/batch/profile_files.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "io/atomic_file.h"
#include "pipeline/output/profile_plot.h"

namespace cpufold {
namespace {

// RFC 4180: quoted when it holds a comma, quote or line end.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';  // doubled
    q += c == '\n' || c == '\r' ? ' ' : c;
  }
  q += '"';
  return q;
}

std::string decimal(double v, int places) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", places, v);
  return buf;
}

std::vector<std::string> block_names(std::span<const LengthProfile> lengths) {
  std::vector<std::string> names;
  for (const LengthProfile& l : lengths) {
    for (const PlannedBlock& b : l.blocks) {
      if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
    }
  }
  return names;
}

// Each block's columns (after "<block>_block_"), and their cells: the prediction once planned,
// the measurements once the block ran.
constexpr const char* kBlockColumns[] = {"seconds",           "peak_bytes",    "predicted_bytes",
                                         "activations_bytes", "scratch_bytes", "ratio"};

std::vector<std::string> block_cells(const ProfiledBlock* b) {
  if (b == nullptr) return std::vector<std::string>(std::size(kBlockColumns));
  const bool ran = b->ran;
  return {ran ? decimal(b->seconds, 3) : "",    ran ? std::to_string(b->measured_peak_bytes) : "",
          std::to_string(b->predicted.total()), std::to_string(b->predicted.activations),
          std::to_string(b->predicted.scratch), ran ? decimal(b->ratio(), 4) : ""};
}

}  // namespace

std::string planned_block_column(const std::string& block_name) {
  std::string slug;
  for (char c : block_name.substr(0, block_name.find(" ("))) {
    slug += std::isalnum(static_cast<unsigned char>(c))
                ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                : '_';
  }
  return "planned_" + slug + "_bytes";
}

std::string profile_csv(std::span<const LengthProfile> lengths) {
  const std::vector<std::string> blocks = block_names(lengths);
  std::vector<std::string> header = {
      "n_res",    "msa_rows", "extra_rows",           "templates",
      "recycles", "chunk",    "predicted_peak_bytes", "measured_peak_bytes",
      "ratio"};
  for (const char* s : kProfileStages) header.push_back(std::string(s) + "_peak_bytes");
  for (const char* s : kProfileStages) header.push_back(std::string(s) + "_seconds");
  for (const std::string& b : blocks) header.push_back(planned_block_column(b));
  for (const char* c : {"mode", "plan_peak_bytes", "block_resident_bytes"}) header.emplace_back(c);
  for (const char* b : kProfileBlocks) {
    for (const char* c : kBlockColumns) header.push_back(std::string(b) + "_block_" + c);
  }
  for (const char* c : {"stage_peak_method", "status", "error"}) header.emplace_back(c);

  std::string csv;
  const auto row = [&csv](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) csv += ',';
      csv += csv_field(fields[i]);
    }
    csv += "\n";
  };
  row(header);
  for (const LengthProfile& l : lengths) {
    const auto planned = [&](std::size_t v) { return l.planned ? std::to_string(v) : ""; };
    const auto measured = [&](std::size_t v) { return l.ok ? std::to_string(v) : ""; };
    const ProfileSizes& z = l.sizes;
    std::vector<std::string> f = {std::to_string(z.n_res),
                                  std::to_string(z.msa_rows),
                                  std::to_string(z.extra_rows),
                                  std::to_string(z.templates),
                                  std::to_string(z.recycles),
                                  l.planned ? chunk_sizes_token(l.chunks) : "",
                                  planned(l.predicted_peak_bytes),
                                  measured(l.measured_peak_bytes),
                                  l.ok && l.planned ? decimal(l.ratio(), 4) : ""};
    for (const char* s : kProfileStages) {
      const StagePeak* p = l.stage(s);
      f.push_back(l.ok && p ? std::to_string(p->peak_bytes) : "");
    }
    for (const char* s : kProfileStages) {
      const StagePeak* p = l.stage(s);
      f.push_back(l.ok && p ? decimal(p->seconds, 3) : "");
    }
    for (const std::string& b : blocks) {
      const auto it = std::find_if(l.blocks.begin(), l.blocks.end(),
                                   [&](const PlannedBlock& p) { return p.name == b; });
      f.push_back(it == l.blocks.end() ? "" : std::to_string(it->bytes));
    }
    f.emplace_back(l.blocks_only ? "blocks" : "model");
    f.push_back(planned(l.plan_peak_bytes));
    f.push_back(l.block_runs.empty() ? ""
                                     : std::to_string(l.block_runs.front().predicted.resident));
    for (const char* name : kProfileBlocks) {
      const std::vector<std::string> cells = block_cells(l.block_run(name));
      f.insert(f.end(), cells.begin(), cells.end());
    }
    f.push_back(l.stage_method);
    f.emplace_back(l.ok ? "ok" : "failed");
    f.push_back(l.ok ? "" : l.error);
    row(f);
  }
  return csv;
}

std::vector<std::filesystem::path> write_profile_files(const std::filesystem::path& dir,
                                                       std::span<const LengthProfile> lengths,
                                                       const std::string& title,
                                                       const std::string& subtitle) {
  std::filesystem::create_directories(dir);
  std::vector<std::filesystem::path> written{dir / "profile.csv"};
  write_file_atomically(written.back(), profile_csv(lengths));
  std::vector<ProfilePlotLength> plot;
  bool any = false, blocks_only = false;
  for (const LengthProfile& l : lengths) {
    ProfilePlotLength p{l.sizes.n_res,
                        l.planned ? l.predicted_peak_bytes : 0,
                        l.ok ? l.measured_peak_bytes : 0,
                        {},
                        l.blocks_only && l.planned ? l.plan_peak_bytes : 0};
    if (l.ok) {
      for (const StagePeak& s : l.stages) {
        if (!s.name.ends_with("_block")) p.stages.push_back({s.name, s.peak_bytes, 0});
      }
    }
    // Blocks with their own predictions, also those that ended before their length failed.
    for (const ProfiledBlock& b : l.block_runs) {
      if (b.ran)
        p.stages.push_back(
            {profile_block_title(b.name), b.measured_peak_bytes, b.predicted.total()});
    }
    blocks_only = blocks_only || l.blocks_only;
    any = any || p.predicted_bytes > 0 || p.measured_bytes > 0;
    plot.push_back(std::move(p));
  }
  if (any) {
    written.push_back(dir / "profile.png");
    write_file_atomically(written.back(),
                          profile_plot_png(title, subtitle, plot,
                                           blocks_only ? ProfilePlotKind::single_blocks
                                                       : ProfilePlotKind::whole_runs));
  }
  return written;
}

}  // namespace cpufold
