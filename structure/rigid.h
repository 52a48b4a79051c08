// Rigid transforms (rotation + translation) for the structure module: backbone frames,
// rigid-group frames and the residue-constant construction. x_global = rot · x_local + trans.
//
// Storage conventions used across structure/ (all row-major fp32):
//   tensor-7:   [w, x, y, z, tx, ty, tz]   quaternion (need not be normalised) then translation
//   tensor-4x4: [[R, t], [0 0 0 1]]        16 floats, row-major, as OpenFold's to_tensor_4x4
//   rot 3x3:    9 floats row-major (R[i][j] at 3*i + j), as AF2's rot_mats
// RigidT<double> exists only so residue constants can be derived in double precision the way
// AF2 does it in numpy float64; the model itself uses Rigid (float).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace cpufold {

template <typename Scalar>
struct RigidT {
  using Mat3 = Eigen::Matrix<Scalar, 3, 3>;
  using Vec3 = Eigen::Matrix<Scalar, 3, 1>;
  using Quat = Eigen::Matrix<Scalar, 4, 1>;  // (w, x, y, z)

  Mat3 rot = Mat3::Identity();
  Vec3 trans = Vec3::Zero();

  static RigidT identity() { return {}; }

  // AF2 quat_to_rot: the quaternion (w, x, y, z) is normalised first (QuatAffine normalize=True).
  static RigidT from_quaternion(const Quat& wxyz, const Vec3& trans);
  // quat_to_rot of a quaternion that is already a unit one (normalised once, when it was made,
  // as OpenFold's Rotation keeps it): normalising again would round it differently.
  static RigidT from_unit_quaternion(const Quat& wxyz, const Vec3& trans);
  // AF2 Alg. 21 (rigidFrom3Points): origin x2, e1 along x3 - x2, e2 in the plane of x1 - x2.
  static RigidT from_3_points(const Vec3& x1, const Vec3& x2, const Vec3& x3);
  // AF2 Alg. 21 with the translation given separately; this is residue_constants'
  // _make_rigid_transformation_4x4(ex, ey, translation): Gram–Schmidt on (ex, ey), e3 = e1 × e2.
  static RigidT from_axes(const Vec3& ex, const Vec3& ey, const Vec3& trans);

  // Rotation about the x axis by the angle with (sin, cos) = (s, c); no normalisation, as in
  // AF2 Alg. 24 line 10 (the torsion rotation matrix).
  static RigidT rotation_x(Scalar s, Scalar c);

  // The products are written out left to right, r00·x + r01·y + r02·z, as OpenFold's
  // rot_vec_mul / rot_matmul and AF2's r3 evaluate them. Both runs of the reference round its
  // geometry the same way, so its own spread holds none of that rounding; another order (Eigen's)
  // adds noise of about ulp(|t|) per frame operation, which grows with the coordinates.
  static Vec3 rotate(const Mat3& r, const Vec3& x);
  static Vec3 rotate_inverse(const Mat3& r, const Vec3& x);  // rᵀ·x
  static Mat3 rot_matmul(const Mat3& a, const Mat3& b);

  // (this ∘ other)(x) = this(other(x)).
  RigidT compose(const RigidT& other) const {
    return {rot_matmul(rot, other.rot), rotate(rot, other.trans) + trans};
  }
  RigidT inverse() const {
    Mat3 rt = rot.transpose();
    return {rt, -rotate(rt, trans)};
  }
  Vec3 apply(const Vec3& x) const { return rotate(rot, x) + trans; }
  Vec3 apply_inverse(const Vec3& x) const { return rotate_inverse(rot, x - trans); }

  // Unit quaternion (w, x, y, z) of rot with w >= 0 (rot must be a proper rotation).
  Quat to_quaternion() const;

  // Buffers in the storage conventions above (Eigen maps, no intermediate copies).
  // The tensor-7 quaternion is taken as a unit one (AF2 QuatAffine.from_tensor and OpenFold
  // Rigid.from_tensor_7 do not normalise by default).
  static RigidT from_tensor_7(const Scalar* src7);
  static RigidT from_tensor_4x4(const Scalar* src16);
  void to_tensor_4x4(Scalar* dst16) const;
  void to_tensor_7(Scalar* dst7) const;  // quaternion via to_quaternion()
};

using Rigid = RigidT<float>;
using RigidD = RigidT<double>;

extern template struct RigidT<float>;
extern template struct RigidT<double>;

}  // namespace cpufold
