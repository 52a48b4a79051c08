// ColabFold's local MMseqs2 MSA search (colabfold/mmseqs/search.py, mmseqs_search_monomer with
// its defaults: filter on, UniRef30 and the environmental database) over a batch of queries.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/search/search_databases.h"

namespace cpufold {

struct MmseqsQuery {
  std::string sequence;
  std::filesystem::path output;  // the A3M to write (atomically)
};

// Runs ColabFold's steps in `work_dir` (created; left for the caller to remove):
//   createdb QUERIES qdb --shuffle 0 (query headers ">101" as colabfold_search names them)
//   search qdb UNIREF res tmp --num-iterations 3 -a -e 0.1 --max-seqs 10000 -s 8.0
//   expandaln qdb UNIREF_seq res UNIREF_aln res_exp --expansion-mode 0 -e inf
//             --expand-filter-clusters 1 --max-seq-id 0.95
//   align prof_res UNIREF_seq res_exp res_exp_realign -e 10 --max-accept 100000 --alt-ali 10 -a
//   filterresult qdb UNIREF_seq res_exp_realign res_exp_realign_filter --qid 0 --qsc 0.8
//             --diff 0 --max-seq-id 1.0 --filter-min-enable 100
//   result2msa qdb UNIREF_seq res_exp_realign_filter uniref.a3m --msa-format-mode 6
//             --filter-msa 1 --filter-min-enable 1000 --diff 3000 --qid 0.0,0.2,0.4,0.6,0.8,1.0
//             --qsc 0 --max-seq-id 0.95
// the same for the environmental database (searched with the UniRef profile, no
// --expand-filter-clusters / --max-seq-id on expandaln), then mergedbs and unpackdb. Every
// call gets --threads THREADS and --db-load-mode (2 with an index, 0 without, as ColabFold).
// Each query's A3M is written to its `output` with MMseqs2's NUL separators removed.
// `say` gets one line per step with its time.
void run_colabfold_search(const std::vector<MmseqsQuery>& queries,
                          const ColabFoldDatabases& databases,
                          const std::filesystem::path& work_dir, int threads,
                          const std::function<void(const std::string&)>& say);

}  // namespace cpufold
