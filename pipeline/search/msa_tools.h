// The command lines of AlphaFold2's MSA tools, with the settings of its data pipeline
// (alphafold/data/tools/jackhmmer.py and hhblits.py, as data/pipeline.py builds them).
#pragma once

#include <filesystem>
#include <vector>

#include "pipeline/search/external_program.h"

namespace cpufold {

// AF2's thread counts: Jackhmmer(n_cpu=8), HHBlits(n_cpu=4).
inline constexpr int kAf2JackhmmerCpus = 8;
inline constexpr int kAf2HhblitsCpus = 4;

// jackhmmer -o /dev/null -A OUT --noali --F1 0.0005 --F2 0.00005 --F3 0.0000005 --incE 0.0001
//           -E 0.0001 --cpu CPUS -N 1 QUERY DATABASE
ExternalProgram jackhmmer_program(const std::filesystem::path& query_fasta,
                                  const std::filesystem::path& database,
                                  const std::filesystem::path& output_sto, int cpus);

// hhblits -i QUERY -cpu CPUS -oa3m OUT -o /dev/null -n 3 -e 0.001 -maxseq 1000000
//         -realign_max 100000 -maxfilt 100000 -min_prefilter_hits 1000 -d DB1 -d DB2 ...
ExternalProgram hhblits_program(const std::filesystem::path& query_fasta,
                                const std::vector<std::filesystem::path>& databases,
                                const std::filesystem::path& output_a3m, int cpus);

// The cores this process may run on (its affinity mask), at least 1.
int available_cpus();

}  // namespace cpufold
