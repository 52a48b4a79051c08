// The alignment AF2's monomer pipeline builds the template profile from (data/pipeline.py):
// the uniref90 hits cut at uniref_max_hits, deduplicated, empty columns removed
// (parsers.truncate_stockholm_msa, deduplicate_stockholm_msa,
// remove_empty_columns_from_stockholm_msa).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cpufold {

// AF2 uniref_max_hits: the rows the uniref90 alignment keeps.
inline constexpr std::size_t kUniref90MaxHits = 10000;

// The three steps in AF2's order.
std::string msa_for_templates(std::string_view sto, std::size_t max_sequences = kUniref90MaxHits);

// Keeps the first `max_sequences` named rows (and their #=GS lines, the #=GC RF lines, the
// header and end lines); other markup is dropped.
std::string truncate_stockholm(std::string_view sto, std::size_t max_sequences);
// Drops a row equal to an earlier one in the query's non-gap columns (insertions ignored).
std::string deduplicate_stockholm(std::string_view sto);
// Drops, per alignment block, the columns where every row has '-' (the #=GC RF line too).
std::string remove_empty_columns(std::string_view sto);

}  // namespace cpufold
