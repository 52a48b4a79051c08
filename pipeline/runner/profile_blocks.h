// `cpufold profile --blocks-only` for one length, once the model is loaded and the run planned:
// instead of the whole model, one extra-MSA block and one Evoformer block of the loaded model,
// each at the plan's chunk and the model's precision, with its predicted and measured peak and
// its wall time. A block at 2,500-4,000 residues takes minutes where the whole run takes hours.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "pipeline/runner/length_profile.h"
#include "pipeline/runner/model_runner.h"
#include "pipeline/runner/stage_meter.h"

namespace cpufold {

// The blocks a blocks-only profile of `sizes` runs with `chunks` (kProfileBlocks, in run order),
// each with its predicted peak (block_peak.h): the planner's process and weights (all of them,
// as resident as in a run: see run_profile_blocks), then the block's activations and scratch.
std::vector<ProfiledBlock> plan_profile_blocks(const ModelRunner& runner, const ProfileSizes& sizes,
                                               const ChunkSizes& chunks);

// Runs each of `blocks` in turn (no warm-up: at the lengths this is for, oneDNN's set-up is
// negligible), each a stage of `meter` of its own, and fills in its measured peak and seconds;
// `done` sees each as it ends. Before a block allocates anything: BudgetError when its predicted
// peak is above `budget`, or without one above the memory available (a block that cannot fit
// would only be killed). Call ModelRunner::make_weights_resident first, so that the block runs
// beside all of the weights the prediction counts.
void run_profile_blocks(const ModelRunner& runner, std::int64_t n_res,
                        std::vector<ProfiledBlock>& blocks, std::optional<std::size_t> budget,
                        StageMeter& meter, const std::function<void(const ProfiledBlock&)>& done);

}  // namespace cpufold
