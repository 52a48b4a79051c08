// The AF2 monomer raw features of one query: its sequence features and the MSAs merged
// into one deduplicated alignment (AF2 data/pipeline.py make_sequence_features and
// make_msa_features). The feature pipeline turns these into the model's inputs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/a3m.h"
#include "io/hdf5_tensor_file.h"
#include "pipeline/features/template_features.h"

namespace cpufold {

struct RawFeatures {
  std::string sequence;  // the query as written (B/J/O/U/Z kept)
  std::int64_t n_res = 0;
  std::vector<std::int32_t> aatype;           // [n_res] AF2 restype order, 20 = X
  std::vector<std::int32_t> residue_index;    // [n_res] 0-based
  std::int64_t n_msa = 0;                     // rows after deduplication, query first
  std::vector<std::int32_t> msa;              // [n_msa * n_res] HHblits ids (A=0 ... X=20, '-'=21)
  std::vector<std::int32_t> deletion_matrix;  // [n_msa * n_res]
  RawTemplates templates;                     // n_templ = 0 when there are none
};

// Single-sequence features when `msas` is empty. The MSAs are concatenated in the given
// order (AF2: uniref90, bfd, mgnify) with exact duplicate rows removed (first kept); a
// query row is added when none is given. Throws InputError naming `msa_names[i]` when an
// MSA's first row differs from `query` (position and both letters named).
RawFeatures make_raw_features(std::string_view query, std::span<const Msa> msas,
                              std::span<const std::string> msa_names);

// The raw_features/ group of a reference file (parity tests).
RawFeatures read_raw_features(const Hdf5TensorReader& file);

}  // namespace cpufold
