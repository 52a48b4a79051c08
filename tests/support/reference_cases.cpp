#include "tests/support/reference_cases.h"

#include "tests/support/parity.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {

const std::vector<ReferenceCase>& rec1_cases() {
  static const std::vector<ReferenceCase> cases = {
      {"model_1_ptm", "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5", false},
      {"model_3_ptm", "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5", false},
      {"model_1_ptm", "model_1_ptm_r24_c8_e16_t2_rec1_s0.h5", true},
      {"model_3_ptm", "model_3_ptm_r24_c8_e16_t0_rec1_s0.h5", true},
  };
  return cases;
}

const std::vector<ReferenceCase>& all_cases() {
  static const std::vector<ReferenceCase> cases = [] {
    std::vector<ReferenceCase> all = rec1_cases();
    all.push_back({"model_1_ptm", "model_1_ptm_r24_c8_e16_t2_rec3_s0.h5", false});
    all.push_back({"model_3_ptm", "model_3_ptm_r24_c8_e16_t0_rec3_s0.h5", false});
    return all;
  }();
  return cases;
}

std::vector<ReferenceCase> with_templates(const std::vector<ReferenceCase>& cases) {
  std::vector<ReferenceCase> out;
  for (const ReferenceCase& c : cases) {
    if (std::string(c.file).find("_t0_") == std::string::npos) out.push_back(c);
  }
  return out;
}

ResolvedCase resolve(const ReferenceCase& c) {
  if (!c.full_width) return {tiny_reference(c.file), tiny_params(c.preset), false};
  if (!reference_dir()) return {{}, {}, true};
  return {full_width_reference(c.file), full_width_params(c.preset), false};
}

std::string case_name(const ReferenceCase& c) {
  const std::string file = c.file;
  return std::string(c.full_width ? "full_" : "tiny_") + c.preset +
         (file.find("rec3") != std::string::npos ? "_rec3" : "_rec1");
}

}  // namespace cpufold::testing
