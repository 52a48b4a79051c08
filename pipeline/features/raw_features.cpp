#include "pipeline/features/raw_features.h"

#include <string_view>
#include <unordered_set>

#include "memory/error.h"
#include "pipeline/features/hhblits_alphabet.h"

namespace cpufold {
namespace {

std::string quoted_name(std::span<const std::string> names, std::size_t i) {
  std::string name(1, i < names.size() ? '\'' : '#');
  name += i < names.size() ? names[i] + "'" : std::to_string(i + 1);
  return name;
}

// AF2 data/pipeline.py make_sequence_features: aatype (unknown letters -> X), 0-based index.
void set_sequence_features(std::string_view query, RawFeatures& raw) {
  if (query.empty()) throw InputError("the query sequence is empty");
  raw.sequence = std::string(query);
  raw.n_res = static_cast<std::int64_t>(query.size());
  raw.aatype.resize(query.size());
  raw.residue_index.resize(query.size());
  for (std::size_t i = 0; i < query.size(); ++i) {
    const int t = af2_restype(query[i]);
    if (t < 0) {
      throw InputError("the query has '" + std::string(1, query[i]) + "' at residue " +
                       std::to_string(i + 1) + "; only letters A-Z are residues");
    }
    raw.aatype[i] = t;
    raw.residue_index[i] = static_cast<std::int32_t>(i);
  }
}

void check_query_row(std::string_view query, const Msa& msa, const std::string& name) {
  if (msa.sequences.empty()) throw InputError("MSA " + name + " holds no sequences");
  const std::string& row0 = msa.sequences.front();
  if (row0.size() != query.size()) {
    throw InputError("MSA " + name + " has " + std::to_string(row0.size()) +
                     " match columns in its first row, but the query has " +
                     std::to_string(query.size()) + " residues");
  }
  for (std::size_t i = 0; i < query.size(); ++i) {
    if (row0[i] != query[i]) {
      throw InputError("MSA " + name + ": its first row must be the query, but residue " +
                       std::to_string(i + 1) + " is '" + std::string(1, row0[i]) +
                       "' where the query has '" + std::string(1, query[i]) + "'");
    }
  }
}

}  // namespace

// AF2 data/pipeline.py make_msa_features: rows deduplicated on the sequence string.
RawFeatures make_raw_features(std::string_view query, std::span<const Msa> msas,
                              std::span<const std::string> msa_names) {
  RawFeatures raw;
  set_sequence_features(query, raw);
  const auto n = static_cast<std::size_t>(raw.n_res);
  if (msas.empty()) {
    // Single-sequence mode: the query is the whole alignment.
    raw.n_msa = 1;
    raw.msa.resize(n);
    raw.deletion_matrix.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) raw.msa[i] = hhblits_id(query[i]);
    return raw;
  }
  std::unordered_set<std::string_view> seen;
  for (std::size_t m = 0; m < msas.size(); ++m) {
    const Msa& msa = msas[m];
    const std::string name = quoted_name(msa_names, m);
    check_query_row(query, msa, name);
    if (msa.deletions.size() != msa.sequences.size()) {
      throw InputError("MSA " + name + " has " + std::to_string(msa.sequences.size()) +
                       " rows but " + std::to_string(msa.deletions.size()) + " deletion rows");
    }
    for (std::size_t r = 0; r < msa.sequences.size(); ++r) {
      const std::string& row = msa.sequences[r];
      if (row.size() != n || msa.deletions[r].size() != n) {
        throw InputError("MSA " + name + " row " + std::to_string(r + 1) + " has " +
                         std::to_string(row.size()) + " match columns, the query " +
                         std::to_string(n));
      }
      if (!seen.insert(row).second) continue;
      for (std::size_t i = 0; i < n; ++i) {
        const int id = hhblits_id(row[i]);
        if (id < 0) {
          throw InputError("MSA " + name + " row " + std::to_string(r + 1) + " has '" +
                           std::string(1, row[i]) + "' in match column " + std::to_string(i + 1));
        }
        raw.msa.push_back(id);
      }
      raw.deletion_matrix.insert(raw.deletion_matrix.end(), msa.deletions[r].begin(),
                                 msa.deletions[r].end());
      ++raw.n_msa;
    }
  }
  return raw;
}

RawFeatures read_raw_features(const Hdf5TensorReader& file) {
  auto require_shape = [&](const std::string& name, std::int64_t rank) {
    const Shape s = file.shape(name);
    if (s.rank() != rank) {
      throw InputError(name + " in " + file.path().string() + " has shape " + s.str() +
                       ", expected rank " + std::to_string(rank));
    }
    return s;
  };
  auto read_i32 = [&](const std::string& name, const Shape& s) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(s.numel()));
    file.read(name, Tensor(v.data(), DType::i32, s));
    return v;
  };
  auto read_f32 = [&](const std::string& name, const Shape& s) {
    std::vector<float> v(static_cast<std::size_t>(s.numel()));
    file.read(name, Tensor(v.data(), DType::f32, s));
    return v;
  };

  RawFeatures raw;
  const Shape aatype_shape = require_shape("raw_features/aatype", 2);  // one-hot [n_res, 21]
  raw.n_res = aatype_shape[0];
  const std::int64_t n_aa = aatype_shape[1];
  const std::vector<std::int32_t> one_hot = read_i32("raw_features/aatype", aatype_shape);
  raw.aatype.resize(static_cast<std::size_t>(raw.n_res));
  for (std::int64_t i = 0; i < raw.n_res; ++i) {
    int best = 0;  // argmax, first maximum
    for (int a = 1; a < n_aa; ++a)
      if (one_hot[static_cast<std::size_t>(i * n_aa + a)] >
          one_hot[static_cast<std::size_t>(i * n_aa + best)])
        best = a;
    raw.aatype[static_cast<std::size_t>(i)] = best;
    raw.sequence.push_back(best <= kAf2UnknownRestype ? kAf2Restypes[best] : 'X');
  }
  raw.residue_index = read_i32("raw_features/residue_index", Shape{raw.n_res});
  const Shape msa_shape = require_shape("raw_features/msa", 2);
  if (msa_shape[1] != raw.n_res || !(file.shape("raw_features/deletion_matrix_int") == msa_shape)) {
    throw InputError("raw_features/msa and deletion_matrix_int in " + file.path().string() +
                     " do not both have shape [n_msa, " + std::to_string(raw.n_res) + "]");
  }
  raw.n_msa = msa_shape[0];
  raw.msa = read_i32("raw_features/msa", msa_shape);
  raw.deletion_matrix = read_i32("raw_features/deletion_matrix_int", msa_shape);
  for (std::int32_t id : raw.msa) {
    if (id < 0 || id > kMsaGapToken) {
      throw InputError("raw_features/msa in " + file.path().string() + " holds " +
                       std::to_string(id) + ", not an HHblits id (0-21)");
    }
  }

  if (file.has("raw_features/template_aatype")) {
    RawTemplates& t = raw.templates;
    const Shape ts = require_shape("raw_features/template_aatype", 3);
    t.n_templ = ts[0];
    t.n_res = ts[1];
    t.aatype_one_hot = read_f32("raw_features/template_aatype", ts);
    t.all_atom_positions =
        read_f32("raw_features/template_all_atom_positions", Shape{t.n_templ, t.n_res, 37, 3});
    t.all_atom_mask =
        read_f32("raw_features/template_all_atom_mask", Shape{t.n_templ, t.n_res, 37});
    const Shape ps = file.shape("raw_features/template_sum_probs");
    t.sum_probs = read_f32("raw_features/template_sum_probs", ps);
    if (static_cast<std::int64_t>(t.sum_probs.size()) != t.n_templ) {
      throw InputError("raw_features/template_sum_probs in " + file.path().string() +
                       " has shape " + ps.str() + ", expected one value per template");
    }
  }
  return raw;
}

}  // namespace cpufold
