#include "pipeline/batch/prediction_files.h"

#include "io/atomic_file.h"
#include "io/hdf5_tensor_file.h"
#include "io/npy_writer.h"
#include "pipeline/runner/prediction_h5.h"

namespace cpufold {

PredictionView view_of(const IterationStructure& s, const RawFeatures& raw) {
  PredictionView v;
  v.aatype = raw.aatype;
  v.residue_index = raw.residue_index;
  v.atom_positions = s.atom_positions;
  v.atom_mask = s.atom_mask;
  v.plddt = s.plddt;
  return v;
}

PredictionView view_of(const Prediction& p, const RawFeatures& raw) {
  PredictionView v = view_of({p.final_atom_positions, p.final_atom_mask, p.plddt}, raw);
  v.has_pae = p.has_pae;
  if (p.has_pae) {
    v.pae = p.predicted_aligned_error;
    v.max_pae = p.max_predicted_aligned_error;
    v.ptm = p.ptm_score;
  }
  return v;
}

void write_unranked_files(const std::filesystem::path& dir, const std::string& job,
                          const std::string& tag, const Prediction& p, const UnrankedFiles& which,
                          RenderedPrediction& r) {
  if (which.all) {
    Hdf5TensorWriter out(unranked_path(dir, job, "all", tag, ".h5"));
    write_prediction_outputs(out, p);
    out.set_root_attribute("job", job);
    out.set_root_attribute("model", tag);
    out.commit();
    r.unranked.push_back({"all", ".h5"});
  }
  // ColabFold's "single" representation is the MSA's first row (what recycling feeds back).
  if (which.single_repr) {
    write_file_atomically(unranked_path(dir, job, "single_repr", tag, ".npy"),
                          npy_f32_bytes(p.msa_first_row));
    r.unranked.push_back({"single_repr", ".npy"});
  }
  if (which.pair_repr) {
    write_file_atomically(unranked_path(dir, job, "pair_repr", tag, ".npy"), npy_f32_bytes(p.pair));
    r.unranked.push_back({"pair_repr", ".npy"});
  }
}

}  // namespace cpufold
