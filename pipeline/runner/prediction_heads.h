// The output heads of one model (AF2 section 1.9): pLDDT, distogram, masked MSA,
// experimentally resolved, and PAE / pTM for the _ptm presets.
#pragma once

#include <optional>

#include "io/model_config.h"
#include "memory/buffer_list.h"
#include "structure/distogram_head.h"
#include "structure/experimentally_resolved_head.h"
#include "structure/masked_msa_head.h"
#include "structure/predicted_aligned_error_head.h"
#include "structure/predicted_lddt_head.h"

namespace cpufold {

struct Prediction;

class PredictionHeads {
 public:
  PredictionHeads(const ParamScope& root, const ModelConfig& config);

  // Reads p.msa (cluster rows), p.pair, p.single, p.sm.single and seq_mask [n_res]; fills the
  // head outputs of p (allocated by allocate_outputs).
  void forward(Prediction& p, const Tensor& seq_mask, const RunContext& ctx) const;
  void allocate_outputs(Prediction& p, Arena& arena, std::int64_t n_seq, std::int64_t n_res) const;
  std::size_t output_bytes(std::int64_t n_seq, std::int64_t n_res) const;
  std::size_t scratch_bytes(std::int64_t n_seq, std::int64_t n_res) const;

 private:
  // The head outputs, the one list allocate_outputs() and output_bytes() both read.
  BufferList<Prediction> output_buffers(std::int64_t n_seq, std::int64_t n_res) const;

  ModelConfig config_;
  PredictedLddtHead lddt_;
  DistogramHead distogram_;
  MaskedMsaHead masked_msa_;
  ExperimentallyResolvedHead experimentally_resolved_;
  std::optional<PredictedAlignedErrorHead> aligned_error_;
};

}  // namespace cpufold
