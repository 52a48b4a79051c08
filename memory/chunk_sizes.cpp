#include "memory/chunk_sizes.h"

namespace cpufold {

std::int64_t& ChunkSizes::operator[](ChunkFamily f) {
  switch (f) {
    case ChunkFamily::templates:
      return templates;
    case ChunkFamily::extra_msa:
      return extra_msa;
    case ChunkFamily::evoformer:
      return evoformer;
    case ChunkFamily::structure:
      break;
  }
  return structure;
}

std::int64_t ChunkSizes::operator[](ChunkFamily f) const {
  ChunkSizes copy = *this;
  return copy[f];
}

bool ChunkSizes::uniform() const {
  return templates == extra_msa && extra_msa == evoformer && evoformer == structure;
}

const char* chunk_family_key(ChunkFamily f) {
  switch (f) {
    case ChunkFamily::templates:
      return "templates";
    case ChunkFamily::extra_msa:
      return "extra_msa";
    case ChunkFamily::evoformer:
      return "evoformer";
    case ChunkFamily::structure:
      break;
  }
  return "structure";
}

namespace {

const char* family_label(ChunkFamily f) {
  switch (f) {
    case ChunkFamily::templates:
      return "templates";
    case ChunkFamily::extra_msa:
      return "extra-MSA";
    case ChunkFamily::evoformer:
      return "Evoformer";
    case ChunkFamily::structure:
      break;
  }
  return "structure";
}

std::string chunk_text(std::int64_t chunk) {
  return chunk > 0 ? std::to_string(chunk) : std::string("off");
}

}  // namespace

std::string describe_chunk_sizes(const ChunkSizes& chunks) {
  if (chunks.uniform()) {
    return "chunk size " +
           (chunks.evoformer > 0 ? chunk_text(chunks.evoformer) : std::string("off (unsliced)"));
  }
  std::string out;
  for (const ChunkFamily f : kChunkFamilies) {
    out += out.empty() ? "chunk sizes " : ", ";
    out += std::string(family_label(f)) + " " + chunk_text(chunks[f]);
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
