// AF2 ensembling (num_ensemble, AF2 Alg. 2 lines 5-9): every member of an iteration starts from
// the same recycled inputs and sees its own feature sample; pair, single and the first MSA row
// are averaged over the members, the MSA representation is the first member's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "evoformer/trunk.h"
#include "memory/arena.h"
#include "memory/buffer_list.h"

namespace cpufold {

struct EnsembleBuffers {
  Tensor prev_first_row, prev_pair, first_row, pair, single, msa;

  // The one list allocate() and bytes() read.
  static BufferList<EnsembleBuffers> buffers(const TrunkDims& d, const ModelConfig& c);
  // Bytes allocate() takes.
  static std::size_t bytes(const TrunkDims& d, const ModelConfig& c) {
    return buffers(d, c).bytes();
  }
  static EnsembleBuffers allocate(const TrunkDims& d, const ModelConfig& c, Arena& arena) {
    return buffers(d, c).allocate(arena);
  }

  // Before the first member: keep the recycled inputs; before every other: put them back.
  void save_recycled(const TrunkState& s) const;
  void restore_recycled(TrunkState& s) const;
  // After member `member` (0-based): add its outputs to the sums (the first also sets the MSA).
  void accumulate(const TrunkState& s, std::int64_t member) const;
  // After the last of `members`: the averages (and the first member's MSA) into `s`.
  void average_into(TrunkState& s, std::int64_t members) const;
};

}  // namespace cpufold
