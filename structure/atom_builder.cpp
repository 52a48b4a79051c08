#include "structure/atom_builder.h"

#include <cstdint>
#include <string>

#include "memory/error.h"
#include "structure/residue_constants.h"

namespace cpufold {
namespace {

std::int64_t n_res_of(const Tensor& aatype) {
  if (aatype.rank() != 1 || (aatype.dtype() != DType::i64 && aatype.dtype() != DType::i32)) {
    throw InternalError("atom builder: aatype must be i64 or i32 [n_res], got " +
                        aatype.describe());
  }
  return aatype.dim(0);
}

int restype_at(const Tensor& aatype, std::int64_t i) {
  const std::int64_t r = aatype.dtype() == DType::i64
                             ? aatype.at<std::int64_t>({i})
                             : static_cast<std::int64_t>(aatype.at<std::int32_t>({i}));
  if (r < 0 || r >= kNumRestypesWithX) {
    throw InputError("aatype " + std::to_string(r) + " at residue " + std::to_string(i) +
                     " is outside [0, 21)");
  }
  return static_cast<int>(r);
}

void check_shape(const Tensor& t, const Shape& expected, bool contiguous, const char* what) {
  if (t.dtype() != DType::f32 || !(t.shape() == expected) || (contiguous && !t.is_contiguous())) {
    throw InternalError(std::string("atom builder: ") + what + " must be f32 " + expected.str() +
                        (contiguous ? " (contiguous)" : "") + ", got " + t.describe());
  }
}

}  // namespace

// AF2 Alg. 24
void torsion_angles_to_frames(std::span<const Rigid> backbone, const Tensor& angles,
                              const Tensor& aatype, std::span<Rigid> dst) {
  const std::int64_t n_res = n_res_of(aatype);
  check_shape(angles, Shape{n_res, kNumTorsions, 2}, false, "angles");
  if (static_cast<std::int64_t>(backbone.size()) != n_res ||
      static_cast<std::int64_t>(dst.size()) != n_res * kNumRigidGroups) {
    throw InternalError("torsion_angles_to_frames: " + std::to_string(backbone.size()) +
                        " backbone frames and " + std::to_string(dst.size()) +
                        " output frames for " + std::to_string(n_res) + " residues");
  }
  const ResidueConstants& rc = residue_constants();
  for (std::int64_t i = 0; i < n_res; ++i) {
    const int r = restype_at(aatype, i);
    // Group -> parent frames: default frame ∘ rotation about x by the torsion (the backbone
    // group gets the identity torsion (sin 0, cos 1)).
    Rigid local[kNumRigidGroups];
    local[0] = rc.default_frame(r, 0);
    for (int t = 0; t < kNumTorsions; ++t) {
      const float s = angles.at<float>({i, t, 0});
      const float c = angles.at<float>({i, t, 1});
      local[t + 1] = rc.default_frame(r, t + 1).compose(Rigid::rotation_x(s, c));
    }
    // chi2..chi4 hang off the previous chi frame; everything else off the backbone.
    for (int g = 5; g < kNumRigidGroups; ++g) local[g] = local[g - 1].compose(local[g]);
    const Rigid& bb = backbone[static_cast<std::size_t>(i)];
    for (int g = 0; g < kNumRigidGroups; ++g) {
      dst[static_cast<std::size_t>(i * kNumRigidGroups + g)] = bb.compose(local[g]);
    }
  }
}

// AF2 Alg. 24
void frames_to_atom14_positions(std::span<const Rigid> frames, const Tensor& aatype,
                                const Tensor& dst) {
  const std::int64_t n_res = n_res_of(aatype);
  check_shape(dst, Shape{n_res, kNumAtom14, 3}, true, "atom14 positions");
  if (static_cast<std::int64_t>(frames.size()) != n_res * kNumRigidGroups) {
    throw InternalError("frames_to_atom14_positions: " + std::to_string(frames.size()) +
                        " frames for " + std::to_string(n_res) + " residues");
  }
  const ResidueConstants& rc = residue_constants();
  float* out = dst.data_as<float>();
  for (std::int64_t i = 0; i < n_res; ++i) {
    const int r = restype_at(aatype, i);
    for (int k = 0; k < kNumAtom14; ++k) {
      Eigen::Map<Rigid::Vec3> x(out + (i * kNumAtom14 + k) * 3);
      if (rc.atom14_mask[r][k] == 0) {
        x.setZero();
        continue;
      }
      const Rigid& frame =
          frames[static_cast<std::size_t>(i * kNumRigidGroups + rc.atom14_to_rigid_group[r][k])];
      x = frame.apply(Eigen::Map<const Rigid::Vec3>(rc.atom14_rigid_group_positions[r][k]));
    }
  }
}

void atom14_to_atom37(const Tensor& atom14, const Tensor& aatype, const Tensor& atom37,
                      const Tensor& atom37_mask) {
  const std::int64_t n_res = n_res_of(aatype);
  check_shape(atom14, Shape{n_res, kNumAtom14, 3}, true, "atom14 positions");
  check_shape(atom37, Shape{n_res, kNumAtom37, 3}, true, "atom37 positions");
  check_shape(atom37_mask, Shape{n_res, kNumAtom37}, true, "atom37 mask");
  const ResidueConstants& rc = residue_constants();
  const float* src = atom14.data_as<float>();
  float* pos = atom37.data_as<float>();
  float* mask = atom37_mask.data_as<float>();
  for (std::int64_t i = 0; i < n_res; ++i) {
    const int r = restype_at(aatype, i);
    for (int a = 0; a < kNumAtom37; ++a) {
      const float m = rc.atom37_mask[r][a];
      const float* s = src + (i * kNumAtom14 + rc.atom37_to_atom14[r][a]) * 3;
      float* d = pos + (i * kNumAtom37 + a) * 3;
      for (int c = 0; c < 3; ++c) d[c] = s[c] * m;
      mask[i * kNumAtom37 + a] = m;
    }
  }
}

void write_frames_4x4(std::span<const Rigid> frames, const Tensor& dst) {
  const auto n = static_cast<std::int64_t>(frames.size()) / kNumRigidGroups;
  if (static_cast<std::int64_t>(frames.size()) != n * kNumRigidGroups) {
    throw InternalError("write_frames_4x4: " + std::to_string(frames.size()) +
                        " frames is not a whole number of residues");
  }
  check_shape(dst, Shape{n, kNumRigidGroups, 4, 4}, true, "frames");
  float* out = dst.data_as<float>();
  for (std::size_t f = 0; f < frames.size(); ++f) frames[f].to_tensor_4x4(out + f * 16);
}

}  // namespace cpufold
