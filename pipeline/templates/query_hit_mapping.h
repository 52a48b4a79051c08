// Which template residue each query residue is aligned to (AF2 templates.py
// _build_query_to_hit_index_mapping).
#pragma once

#include <map>
#include <string_view>

#include "pipeline/templates/template_hit.h"

namespace cpufold {

// query residue index (0-based, in the whole query) -> hit residue index (0-based, counted
// from the hit's first aligned residue). Empty when the hit aligns nothing.
std::map<int, int> query_to_hit_mapping(const TemplateHit& hit, std::string_view query);

}  // namespace cpufold
