// The reference files parity tests run over: tiny width (shipped in tests/data) and full width
// (from CPUFOLD_REFERENCE_DIR), and the one way to resolve and name them.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace cpufold::testing {

struct ReferenceCase {
  const char* preset;  // "model_1_ptm"
  const char* file;    // "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5"
  bool full_width;
};

// One pass of recycling in every preset and width (the full-width files have only these).
const std::vector<ReferenceCase>& rec1_cases();
// rec1_cases() plus the tiny files with 3 recycles.
const std::vector<ReferenceCase>& all_cases();
// The cases of `cases` whose model embeds templates (their files hold template hits; the
// "_t0_" files of model_3_ptm have none).
std::vector<ReferenceCase> with_templates(const std::vector<ReferenceCase>& cases);

struct ResolvedCase {
  std::filesystem::path reference, params;
  bool skip = false;  // full width without CPUFOLD_REFERENCE_DIR
};
// Paths of a case; a full-width case is skipped when CPUFOLD_REFERENCE_DIR is unset and FAILS
// (ADD_FAILURE, empty paths) when it is set but a file is missing.
ResolvedCase resolve(const ReferenceCase& c);

// "tiny_model_1_ptm_rec1": a test-name suffix.
std::string case_name(const ReferenceCase& c);

inline void PrintTo(const ReferenceCase& c, std::ostream* os) {
  *os << (c.full_width ? "full_width/" : "tiny/") << c.file;
}

}  // namespace cpufold::testing
