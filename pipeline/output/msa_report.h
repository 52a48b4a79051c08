// Where a job's MSA came from and how deep it is, as its scores JSON states it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cpufold {

struct MsaFileRows {
  std::string path;
  std::int64_t rows = 0;  // rows read from the file, its query row included
};

struct MsaReport {
  std::string source;              // "input_a3m", "msa_dir" or "single_sequence"
  std::vector<MsaFileRows> files;  // empty in single-sequence mode
  std::int64_t rows = 0;           // rows used: the files' rows without duplicates, query first
};

}  // namespace cpufold
