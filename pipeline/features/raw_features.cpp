#include "pipeline/features/raw_features.h"

#include <string_view>
#include <type_traits>
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

namespace {

// Datasets of a features file's raw_features/ group, checked as they are read.
class RawFeatureReader {
 public:
  explicit RawFeatureReader(const Hdf5TensorReader& file) : file_(file) {}

  Shape require_shape(const std::string& name, std::int64_t rank) const {
    const Shape s = file_.shape(name);
    if (s.rank() != rank) {
      throw InputError(name + " in " + where() + " has shape " + s.str() + ", expected rank " +
                       std::to_string(rank));
    }
    return s;
  }
  template <typename T>
  std::vector<T> read(const std::string& name, const Shape& s) const {
    std::vector<T> v(static_cast<std::size_t>(s.numel()));
    file_.read(name, Tensor(v.data(), std::is_same_v<T, float> ? DType::f32 : DType::i32, s));
    return v;
  }
  const Hdf5TensorReader& file() const { return file_; }
  std::string where() const { return file_.path().string(); }

 private:
  const Hdf5TensorReader& file_;
};

// The query from its one-hot aatype [n_res, 21] (argmax, first maximum), and its residue index.
void read_query(const RawFeatureReader& in, RawFeatures& raw) {
  const Shape aatype_shape = in.require_shape("raw_features/aatype", 2);
  raw.n_res = aatype_shape[0];
  const std::int64_t n_aa = aatype_shape[1];
  const std::vector<std::int32_t> one_hot =
      in.read<std::int32_t>("raw_features/aatype", aatype_shape);
  raw.aatype.resize(static_cast<std::size_t>(raw.n_res));
  for (std::int64_t i = 0; i < raw.n_res; ++i) {
    int best = 0;
    for (int a = 1; a < n_aa; ++a)
      if (one_hot[static_cast<std::size_t>(i * n_aa + a)] >
          one_hot[static_cast<std::size_t>(i * n_aa + best)])
        best = a;
    raw.aatype[static_cast<std::size_t>(i)] = best;
    raw.sequence.push_back(best <= kAf2UnknownRestype ? kAf2Restypes[best] : 'X');
  }
  raw.residue_index = in.read<std::int32_t>("raw_features/residue_index", Shape{raw.n_res});
}

void read_msa(const RawFeatureReader& in, RawFeatures& raw) {
  const Shape msa_shape = in.require_shape("raw_features/msa", 2);
  if (msa_shape[1] != raw.n_res ||
      !(in.file().shape("raw_features/deletion_matrix_int") == msa_shape)) {
    throw InputError("raw_features/msa and deletion_matrix_int in " + in.where() +
                     " do not both have shape [n_msa, " + std::to_string(raw.n_res) + "]");
  }
  raw.n_msa = msa_shape[0];
  raw.msa = in.read<std::int32_t>("raw_features/msa", msa_shape);
  raw.deletion_matrix = in.read<std::int32_t>("raw_features/deletion_matrix_int", msa_shape);
  for (std::int32_t id : raw.msa) {
    if (id < 0 || id > kMsaGapToken) {
      throw InputError("raw_features/msa in " + in.where() + " holds " + std::to_string(id) +
                       ", not an HHblits id (0-21)");
    }
  }
}

void read_templates(const RawFeatureReader& in, RawTemplates& t) {
  const Shape ts = in.require_shape("raw_features/template_aatype", 3);
  t.n_templ = ts[0];
  t.n_res = ts[1];
  t.aatype_one_hot = in.read<float>("raw_features/template_aatype", ts);
  t.all_atom_positions =
      in.read<float>("raw_features/template_all_atom_positions", Shape{t.n_templ, t.n_res, 37, 3});
  t.all_atom_mask =
      in.read<float>("raw_features/template_all_atom_mask", Shape{t.n_templ, t.n_res, 37});
  const Shape ps = in.file().shape("raw_features/template_sum_probs");
  t.sum_probs = in.read<float>("raw_features/template_sum_probs", ps);
  if (static_cast<std::int64_t>(t.sum_probs.size()) != t.n_templ) {
    throw InputError("raw_features/template_sum_probs in " + in.where() + " has shape " + ps.str() +
                     ", expected one value per template");
  }
}

}  // namespace

RawFeatures read_raw_features(const Hdf5TensorReader& file) {
  const RawFeatureReader in(file);
  RawFeatures raw;
  read_query(in, raw);
  read_msa(in, raw);
  if (file.has("raw_features/template_aatype")) read_templates(in, raw.templates);
  return raw;
}

}  // namespace cpufold
