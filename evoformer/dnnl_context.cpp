#include "evoformer/dnnl_context.h"

#include <cstring>

namespace cpufold {

DnnlContext::DnnlContext() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

DnnlContext& DnnlContext::instance() {
  static DnnlContext context;
  return context;
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

}  // namespace cpufold
