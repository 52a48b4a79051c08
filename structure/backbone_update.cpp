#include "structure/backbone_update.h"

#include <string>

#include "structure/rigid.h"

namespace cpufold {

BackboneUpdate::BackboneUpdate(const ParamScope& scope, std::int64_t c_s)
    : c_s_(c_s), affine_update_(scope.linear({c_s, 6})) {}

void BackboneUpdate::forward(const Tensor& s, const Tensor& frames, Arena& scratch) const {
  const std::int64_t n = s.rank() == 2 ? s.dim(0) : -1;
  if (s.dtype() != DType::f32 || !(s.shape() == Shape{n, c_s_}) || frames.dtype() != DType::f32 ||
      !(frames.shape() == Shape{n, 7}) || !frames.is_contiguous()) {
    throw InternalError("BackboneUpdate needs s [n_res, " + std::to_string(c_s_) +
                        "] and contiguous frames [n_res, 7], got " + s.describe() + " and " +
                        frames.describe());
  }
  if (n == 0) return;
  ArenaScope scope(scratch);
  const Tensor update = buffers(n).allocate(scratch).update;
  affine_update_.forward(s, update, scratch);
  const float* u = update.data_as<float>();
  float* f = frames.data_as<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    Eigen::Map<Rigid::Quat> q(f + 7 * i);
    Eigen::Map<Rigid::Vec3> t(f + 7 * i + 4);
    const Eigen::Map<const Rigid::Vec3> v(u + 6 * i);
    const Eigen::Map<const Rigid::Vec3> dt(u + 6 * i + 3);
    const Rigid old = Rigid::from_unit_quaternion(q, Rigid::Vec3::Zero());
    // q·(0, v): the Hamilton product with a pure quaternion (AF2 quat_multiply_by_vec).
    const float w = q[0], x = q[1], y = q[2], z = q[3];
    const Rigid::Quat dq(-x * v[0] - y * v[1] - z * v[2],  //
                         w * v[0] + y * v[2] - z * v[1],   //
                         w * v[1] - x * v[2] + z * v[0],   //
                         w * v[2] + x * v[1] - y * v[0]);
    const Rigid::Quat next = q + dq;
    q = next / next.norm();
    t += Rigid::rotate(old.rot, dt);  // OpenFold: trans + rots.apply(dt)
  }
}

BufferList<BackboneUpdate::Buffers> BackboneUpdate::buffers(std::int64_t n) {
  return {{&Buffers::update, DType::f32, Shape{n, 6}}};
}

std::size_t BackboneUpdate::scratch_bytes(std::int64_t n_res) const {
  return buffers(n_res).bytes() + affine_update_.scratch_bytes(n_res);
}

}  // namespace cpufold
