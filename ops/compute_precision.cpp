#include "ops/compute_precision.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <utility>

#include "memory/error.h"
#include "ops/dnnl_context.h"

namespace cpufold {
namespace {

constexpr std::pair<dnnl::cpu_isa, const char*> kIsaNames[] = {
    {dnnl::cpu_isa::sse41, "sse41"},
    {dnnl::cpu_isa::avx, "avx"},
    {dnnl::cpu_isa::avx2, "avx2"},
    {dnnl::cpu_isa::avx2_vnni, "avx2_vnni"},
    {dnnl::cpu_isa::avx512_mic, "avx512_mic"},
    {dnnl::cpu_isa::avx512_mic_4ops, "avx512_mic_4ops"},
    {dnnl::cpu_isa::avx512_core, "avx512_core"},
    {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
    {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
    {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx"},
};

std::string isa_name(dnnl::cpu_isa isa) {
  for (const auto& [value, name] : kIsaNames) {
    if (value == isa) return name;
  }
  return "isa 0x" + std::to_string(static_cast<unsigned>(isa));
}

Bf16Support probe() {
  Bf16Support s;
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  s.isa = isa_name(isa);
  // oneDNN's ISA values are nested bit sets: AMX includes every bit of AVX512-BF16.
  const auto bits = static_cast<unsigned>(isa);
  const auto bf16_bits = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  s.native = (bits & bf16_bits) == bf16_bits;
  try {
    using dnnl::memory;
    const auto& engine = DnnlContext::instance().engine();
    const memory::dims dims{64, 64};
    const memory::desc a(dims, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc c(dims, memory::data_type::f32, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, a, c), dnnl::primitive_attr(),
                                          engine, /*allow_empty=*/true);
    s.available = pd && !is_reference_impl(pd);
  } catch (const dnnl::error&) {
    s.available = false;
  }
  return s;
}

}  // namespace

const Bf16Support& bf16_support() {
  static const Bf16Support support = probe();
  return support;
}

DType resolve_precision(std::string_view name) {
  if (name.empty() || name == "fp32") return DType::f32;
  const Bf16Support& s = bf16_support();
  if (name == "auto") return s.native ? DType::bf16 : DType::f32;
  if (name != "bf16") {
    throw InputError("--precision " + std::string(name) + " is not one of auto, bf16, fp32");
  }
  if (!s.available) {
    throw InputError("--precision bf16: oneDNN has no bf16 matmul on this CPU (effective ISA " +
                     s.isa +
                     "; it needs AVX512 and runs natively with AVX512-BF16 or AMX); use "
                     "--precision fp32 or auto");
  }
  return DType::bf16;
}

const char* precision_name(DType precision) {
  return precision == DType::bf16 ? "bf16" : "fp32";
}

std::string describe_precision(std::string_view name, DType chosen) {
  const Bf16Support& s = bf16_support();
  std::string line = "precision: " + std::string(precision_name(chosen));
  if (chosen == DType::bf16) {
    line += " (the trunk's products take bf16 operands and weights, accumulate in fp32; ISA " +
            s.isa + (s.native ? ")" : ", no native bf16: oneDNN emulates it, slower than fp32)");
  } else if (name == "auto") {
    line += " (auto: oneDNN's ISA " + s.isa + " has no native bf16 matmul)";
  }
  return line;
}

}  // namespace cpufold
