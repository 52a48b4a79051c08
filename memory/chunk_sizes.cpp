#include "memory/chunk_sizes.h"

namespace cpufold {
namespace {

// Per family, in the order of ChunkFamily: its member, JSON/CSV key and label in text.
struct Family {
  std::int64_t ChunkSizes::*member;
  const char* key;
  const char* label;
};
constexpr Family kFamilies[] = {{&ChunkSizes::templates, "templates", "templates"},
                                {&ChunkSizes::extra_msa, "extra_msa", "extra-MSA"},
                                {&ChunkSizes::evoformer, "evoformer", "Evoformer"},
                                {&ChunkSizes::structure, "structure", "structure"}};

const Family& family(ChunkFamily f) {
  return kFamilies[static_cast<int>(f)];
}

std::string chunk_text(std::int64_t chunk) {
  return chunk > 0 ? std::to_string(chunk) : std::string("off");
}

}  // namespace

std::int64_t& ChunkSizes::operator[](ChunkFamily f) {
  return this->*family(f).member;
}

std::int64_t ChunkSizes::operator[](ChunkFamily f) const {
  return this->*family(f).member;
}

bool ChunkSizes::uniform() const {
  return templates == extra_msa && extra_msa == evoformer && evoformer == structure;
}

const char* chunk_family_key(ChunkFamily f) {
  return family(f).key;
}

std::string describe_chunk_sizes(const ChunkSizes& chunks) {
  if (chunks.uniform()) {
    return "chunk size " +
           (chunks.evoformer > 0 ? chunk_text(chunks.evoformer) : std::string("off (unsliced)"));
  }
  std::string out;
  for (const ChunkFamily f : kChunkFamilies) {
    out += out.empty() ? "chunk sizes " : ", ";
    out += std::string(family(f).label) + " " + chunk_text(chunks[f]);
  }
  return out;
}

std::string chunk_sizes_token(const ChunkSizes& chunks) {
  if (chunks.uniform()) return std::to_string(chunks.evoformer);
  std::string out;
  for (const ChunkFamily f : kChunkFamilies) {
    if (!out.empty()) out += "/";
    out += std::to_string(chunks[f]);
  }
  return out;
}

}  // namespace cpufold
