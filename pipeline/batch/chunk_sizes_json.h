// ChunkSizes in JSON: {"templates": 32, "extra_msa": 16, "evoformer": 32, "structure": 32}
// (plan, timings and profile records), for nlohmann::json and ordered_json alike.
#pragma once

#include <nlohmann/json.hpp>

#include "memory/chunk_sizes.h"

namespace cpufold {

template <class Json>
void to_json(Json& j, const ChunkSizes& chunks) {
  j = Json::object();
  for (const ChunkFamily f : kChunkFamilies) j[chunk_family_key(f)] = chunks[f];
}

template <class Json>
void from_json(const Json& j, ChunkSizes& chunks) {
  for (const ChunkFamily f : kChunkFamilies)
    chunks[f] = j.at(chunk_family_key(f)).template get<std::int64_t>();
}

}  // namespace cpufold
