#include "structure/rigid.h"

#include <cmath>

namespace cpufold {

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_quaternion(const Quat& wxyz, const Vec3& t) {
  return from_unit_quaternion(wxyz / wxyz.norm(), t);
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_unit_quaternion(const Quat& q, const Vec3& t) {
  // AF2 quat_affine.quat_to_rot (OpenFold rigid_utils.quat_to_rot); 2·(a - b) equals 2a - 2b
  // in floating point, so this rounds as OpenFold's table of ±2 coefficients does.
  const Scalar w = q[0], x = q[1], y = q[2], z = q[3];
  RigidT r;
  r.rot << w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y),  //
      2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x),       //
      2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z;
  r.trans = t;
  return r;
}

template <typename Scalar>
typename RigidT<Scalar>::Vec3 RigidT<Scalar>::rotate(const Mat3& r, const Vec3& x) {
  return {r(0, 0) * x[0] + r(0, 1) * x[1] + r(0, 2) * x[2],
          r(1, 0) * x[0] + r(1, 1) * x[1] + r(1, 2) * x[2],
          r(2, 0) * x[0] + r(2, 1) * x[1] + r(2, 2) * x[2]};
}

template <typename Scalar>
typename RigidT<Scalar>::Vec3 RigidT<Scalar>::rotate_inverse(const Mat3& r, const Vec3& x) {
  return {r(0, 0) * x[0] + r(1, 0) * x[1] + r(2, 0) * x[2],
          r(0, 1) * x[0] + r(1, 1) * x[1] + r(2, 1) * x[2],
          r(0, 2) * x[0] + r(1, 2) * x[1] + r(2, 2) * x[2]};
}

template <typename Scalar>
typename RigidT<Scalar>::Mat3 RigidT<Scalar>::rot_matmul(const Mat3& a, const Mat3& b) {
  Mat3 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j)
      out(i, j) = a(i, 0) * b(0, j) + a(i, 1) * b(1, j) + a(i, 2) * b(2, j);
  }
  return out;
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_axes(const Vec3& ex, const Vec3& ey, const Vec3& t) {
  // AF2 Alg. 21 lines 1-4.
  const Vec3 e1 = ex.normalized();
  const Vec3 u2 = ey - e1 * e1.dot(ey);
  const Vec3 e2 = u2.normalized();
  RigidT r;
  r.rot.col(0) = e1;
  r.rot.col(1) = e2;
  r.rot.col(2) = e1.cross(e2);
  r.trans = t;
  return r;
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_3_points(const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  return from_axes(x3 - x2, x1 - x2, x2);  // AF2 Alg. 21
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::rotation_x(Scalar s, Scalar c) {
  RigidT r;
  r.rot << 1, 0, 0,  //
      0, c, -s,      //
      0, s, c;
  return r;
}

template <typename Scalar>
typename RigidT<Scalar>::Quat RigidT<Scalar>::to_quaternion() const {
  // Eigen uses Shepperd's method (stable for every rotation); canonicalise the sign.
  const Eigen::Quaternion<Scalar> q(rot);
  Quat out(q.w(), q.x(), q.y(), q.z());
  if (out[0] < 0) out = -out;
  return out / out.norm();
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_tensor_7(const Scalar* src7) {
  return from_unit_quaternion(Eigen::Map<const Quat>(src7), Eigen::Map<const Vec3>(src7 + 4));
}

template <typename Scalar>
RigidT<Scalar> RigidT<Scalar>::from_tensor_4x4(const Scalar* src16) {
  const Eigen::Map<const Eigen::Matrix<Scalar, 4, 4, Eigen::RowMajor>> m(src16);
  RigidT r;
  r.rot = m.template topLeftCorner<3, 3>();
  r.trans = m.template topRightCorner<3, 1>();
  return r;
}

template <typename Scalar>
void RigidT<Scalar>::to_tensor_4x4(Scalar* dst16) const {
  Eigen::Map<Eigen::Matrix<Scalar, 4, 4, Eigen::RowMajor>> m(dst16);
  m.template topLeftCorner<3, 3>() = rot;
  m.template topRightCorner<3, 1>() = trans;
  m.template bottomLeftCorner<1, 3>().setZero();
  m(3, 3) = 1;
}

template <typename Scalar>
void RigidT<Scalar>::to_tensor_7(Scalar* dst7) const {
  Eigen::Map<Quat> q(dst7);
  Eigen::Map<Vec3> t(dst7 + 4);
  q = to_quaternion();
  t = trans;
}

template struct RigidT<float>;
template struct RigidT<double>;

}  // namespace cpufold
