// Chunk sizes per operation family. The families' transients peak in different phases of an
// iteration, beside different resident activations (the extra-MSA stack beside the extra-MSA
// representation, the Evoformer beside the MSA representation), so the planner gives each the
// largest chunk that keeps its phase under the run's peak instead of one chunk for all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cpufold {

enum class ChunkFamily { templates, extra_msa, evoformer, structure };
inline constexpr ChunkFamily kChunkFamilies[] = {ChunkFamily::templates, ChunkFamily::extra_msa,
                                                 ChunkFamily::evoformer, ChunkFamily::structure};

// Rows per slice of each family's chunked loops (0: unsliced).
struct ChunkSizes {
  std::int64_t templates = 0;  // template pair stack and pointwise attention
  std::int64_t extra_msa = 0;  // extra-MSA stack
  std::int64_t evoformer = 0;  // Evoformer stack, with the embedders before it
  std::int64_t structure = 0;  // structure module (IPA)

  static ChunkSizes all(std::int64_t chunk) { return {chunk, chunk, chunk, chunk}; }
  // --chunk-size: one chunk for every family, or none (the planner chooses).
  static std::optional<ChunkSizes> all(std::optional<std::int64_t> chunk) {
    return chunk ? std::optional<ChunkSizes>(all(*chunk)) : std::nullopt;
  }
  std::int64_t& operator[](ChunkFamily f);
  std::int64_t operator[](ChunkFamily f) const;
  bool uniform() const;
  bool operator==(const ChunkSizes&) const = default;
};

// "templates", "extra_msa", "evoformer", "structure": the keys of JSON and CSV output.
const char* chunk_family_key(ChunkFamily f);

// "chunk size 32" or "chunk size off (unsliced)" when every family has the same chunk, else
// "chunk sizes templates 32, extra-MSA 16, Evoformer 32, structure 32".
std::string describe_chunk_sizes(const ChunkSizes& chunks);
// One token for tables (no commas or spaces): "32", "0", or "32/16/32/32" in the order of
// kChunkFamilies.
std::string chunk_sizes_token(const ChunkSizes& chunks);

}  // namespace cpufold
