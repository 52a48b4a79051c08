// The MSA a job is planned with before its search has run (predict --databases with
// --instances, `cpufold plan --databases`): as deep as any model of the batch reads, so the plan
// is an upper bound on the one the searched MSA gives.
#pragma once

#include <cstdint>
#include <string_view>

#include "io/a3m.h"

namespace cpufold {

// `rows` distinct rows (AF2 deduplicates rows, so copies would not count), the query first; for
// a query of fewer than 3 residues at most 21^length rows, all there are.
Msa deepest_msa(std::string_view query, std::int64_t rows);

}  // namespace cpufold
