#include "pipeline/runner/block_peak.h"

#include <cstdio>

#include "memory/arena.h"

namespace cpufold {
namespace {

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

}  // namespace

DType block_msa_type(EvoformerBlock::Kind kind, DType precision) {
  return kind == EvoformerBlock::Kind::extra_msa ? precision : DType::f32;
}

BlockArenaBytes block_arena_bytes(const EvoformerBlock& block, const ModelConfig& c,
                                  const BlockShape& b) {
  const std::int64_t s = b.n_seq, n = b.n_res;
  const std::int64_t c_m = b.kind == EvoformerBlock::Kind::extra_msa ? c.c_e : c.c_m;
  const DType m_type = block_msa_type(b.kind, b.precision);
  BlockArenaBytes a;
  a.msa = align_up(align_up(static_cast<std::size_t>(s * n * c_m) * dtype_size(m_type)) +
                   f32_bytes(s * n));
  a.pair = align_up(f32_bytes(n * n * c.c_z) + f32_bytes(n * n));
  a.edges = b.msa_apart ? align_up(block.apart_bytes(s, n, b.chunk)) : 0;
  a.scratch = align_up(block.scratch_bytes(s, n, b.chunk, m_type, b.msa_apart));
  return a;
}

BlockPeak predict_block_peak(const EvoformerBlock& block, const ModelConfig& config,
                             const BlockShape& shape, std::size_t resident_bytes) {
  const BlockArenaBytes a = block_arena_bytes(block, config, shape);
  return {resident_bytes, a.activations(), a.scratch};
}

std::string block_peak_line(std::size_t measured_bytes, const BlockPeak& p) {
  char line[256];
  std::snprintf(line, sizeof line,
                "Peak: %.1f MiB RSS against %.1f MiB predicted (%.1f MiB resident + %.1f MiB of "
                "activations + %.1f MiB of planned scratch), ratio %.3f",
                mib(measured_bytes), mib(p.total()), mib(p.resident), mib(p.activations),
                mib(p.scratch),
                p.total() > 0 ? static_cast<double>(measured_bytes) / p.total() : 0.0);
  return line;
}

}  // namespace cpufold
