// Backbone update (AF2 supplement Alg. 23): a per-residue linear map of the single
// representation to a quaternion increment and a translation, composed onto the current frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory/arena.h"
#include "memory/buffer_list.h"
#include "memory/tensor.h"
#include "ops/linear.h"
#include "ops/param_scope.h"

namespace cpufold {

// AF2 Alg. 23
class BackboneUpdate {
 public:
  // scope: `structure_module/fold_iteration/affine_update`, weights [c_s, 6] + bias [6]: the
  // quaternion vector part (b, c, d), then the translation (x, y, z).
  BackboneUpdate(const ParamScope& scope, std::int64_t c_s);

  // s: [n_res, c_s] contiguous.
  // frames: [n_res, 7] f32 contiguous, each row a unit quaternion (w, x, y, z) and a translation
  //   (the structure module's nm units); updated in place as AF2's QuatAffine.pre_compose does:
  //   q' = normalise(q + q·(0, b, c, d)), t' = t + R(q)·(x, y, z) with the OLD rotation. This
  //   keeps the quaternion itself (not a matrix) so its sign and rounding follow the reference.
  void forward(const Tensor& s, const Tensor& frames, Arena& scratch) const;

  std::size_t scratch_bytes(std::int64_t n_res) const;

 private:
  struct Buffers {
    Tensor update;  // the predicted update [n, 6]: quaternion vector part, translation
  };
  static BufferList<Buffers> buffers(std::int64_t n);

  std::int64_t c_s_;
  Linear affine_update_;  // [c_s] -> [6]
};

}  // namespace cpufold
