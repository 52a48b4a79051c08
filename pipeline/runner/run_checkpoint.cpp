#include "pipeline/runner/run_checkpoint.h"

#include <omp.h>

#include <array>
#include <bit>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>
#include <vector>

#include "io/atomic_file.h"
#include "io/blob_cache_file.h"
#include "io/file_identity.h"
#include "io/text_safety.h"
#include "memory/error.h"
#include "ops/row_kernels.h"

namespace cpufold {
namespace {

namespace fs = std::filesystem;

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string shape_text(const Tensor& t) {
  std::string s = std::string(dtype_name(t.dtype())) + "[";
  for (int i = 0; i < t.rank(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(t.dim(i));
  }
  return s + "]";
}

std::string_view contents(const Tensor& t) {
  if (!t.is_contiguous()) throw InternalError("checkpoint: a non-contiguous tensor");
  return {static_cast<const char*>(t.data()), t.nbytes()};
}

void describe_file(std::ostream& key, const fs::path& file) {
  key << "params " << file_content_hash(file) << "\n";
}

void describe_config(std::ostream& key, const ModelConfig& c) {
  key << "model templates " << c.templates << " ptm " << c.ptm_head << " c_m " << c.c_m << " c_z "
      << c.c_z << " c_s " << c.c_s << " c_e " << c.c_e << " c_t " << c.c_t << " blocks "
      << c.n_evoformer_blocks << "/" << c.n_extra_msa_blocks << "/" << c.n_template_blocks << "/"
      << c.n_structure_layers << " parameters " << c.parameter_count << "\n";
}

// The order and the element widths of everything the file holds.
constexpr std::string_view kScalars = "iterations i64, seconds f64 x4";

struct Scalars {
  std::int64_t iterations;
  std::array<double, 4> seconds;
};

std::span<const std::byte> bytes_of(const Tensor& t) {
  return {static_cast<const std::byte*>(t.data()), t.nbytes()};
}

std::array<std::pair<std::string, const Tensor*>, 4> named_tensors(const RecycledState& s) {
  return {{{"msa_first_row " + shape_text(s.msa_first_row), &s.msa_first_row},
           {"pair " + shape_text(s.pair), &s.pair},
           {"prev_pseudo_beta " + shape_text(s.prev_pseudo_beta), &s.prev_pseudo_beta},
           {"ca_prev " + shape_text(s.ca_prev), &s.ca_prev}}};
}

// Test-only hook for the resume tests (tests/pipeline/batch/checkpoint_resume_e2e_test.cpp):
// CPUFOLD_TEST_KILL_AFTER_ITERATION=K kills the process with SIGKILL right after the checkpoint
// of iteration K is written, a deterministic stand-in for `kill -9` at that point.
void test_kill_after(std::int64_t iterations) {
  const char* env = std::getenv("CPUFOLD_TEST_KILL_AFTER_ITERATION");
  if (env != nullptr && std::to_string(iterations) == env) std::raise(SIGKILL);
}

}  // namespace

std::string run_checkpoint_key(const RunIdentity& id, const FeatureSource& source,
                               Arena& features) {
  std::ostringstream key;
  key << "cpufold run checkpoint\n";
  describe_file(key, id.params);
  if (id.config != nullptr) describe_config(key, *id.config);
  key << "recycles " << id.recycles << " ensemble " << id.ensemble << " early_stop "
      << hex64(std::bit_cast<std::uint64_t>(id.early_stop_tolerance)) << " chunk "
      << chunk_sizes_token(id.chunks) << "\ncontext " << id.context << "\n";
  // Numerics of this process: the same run on other threads, kernels or CPUs differs in bits.
  const dnnl_version_t* v = dnnl_version();
  key << "threads " << omp_get_max_threads() << " onednn " << v->major << "." << v->minor << "."
      << v->patch << " " << (v->hash != nullptr ? v->hash : "") << " isa "
      << static_cast<int>(dnnl::get_effective_cpu_isa()) << " row_kernels "
      << detail::row_kernels().name << "\n";
  const Arena::Mark mark = features.mark();
  for (std::int64_t k = 0; k < (id.recycles + 1) * id.ensemble; ++k) {
    features.release_to(mark);
    TrunkInputs in = source.read(k, features);
    key << "sample " << k;
    in.for_each_tensor([&](const Tensor& t) {
      key << " " << shape_text(t);
      if (!t.empty()) key << ":" << hex64(text::fnv1a64(contents(t)));
    });
    key << "\n";
  }
  features.release_to(mark);
  return key.str();
}

RunCheckpoint::RunCheckpoint(const fs::path& dir, std::string_view stem, std::string key,
                             Progress progress)
    : file_(dir / (std::string(stem) + "." + hex64(text::fnv1a64(key)) + ".checkpoint")),
      key_(std::move(key)),
      progress_(std::move(progress)) {
  remove_stale_temporaries(dir);
}

void RunCheckpoint::save(const RecycledState& s) {
  if (failed_) return;
  const Scalars scalars{
      s.iterations, {s.seconds.features, s.seconds.trunk, s.seconds.structure, s.seconds.heads}};
  std::vector<Blob> blobs{{std::string(kScalars), std::as_bytes(std::span(&scalars, 1))}};
  for (const auto& [meta, t] : named_tensors(s)) {
    contents(*t);  // contiguous
    blobs.push_back({meta, bytes_of(*t)});
  }
  try {
    write_blob_cache(file_, key_, blobs);
  } catch (const InputError& e) {
    failed_ = true;
    remove();  // an older iteration's file would be resumed from needlessly far back
    warn(std::string(e.what()) + "; going on without checkpoints");
    return;
  }
  test_kill_after(s.iterations);
}

RunCheckpoint::Load RunCheckpoint::load(RecycledState& into) const {
  Load out;
  BlobCacheLoad file = load_blob_cache(file_, key_);
  if (!file.cache) {
    out.problem = file.problem;
    return out;
  }
  const std::vector<Blob>& blobs = file.cache->blobs;
  const auto named = named_tensors(into);
  Scalars scalars{};
  bool matches = blobs.size() == 1 + named.size() && blobs[0].meta == kScalars &&
                 blobs[0].data.size() == sizeof scalars;
  for (std::size_t i = 0; matches && i < named.size(); ++i) {
    matches = blobs[1 + i].meta == named[i].first &&
              blobs[1 + i].data.size() == named[i].second->nbytes();
  }
  if (!matches) {
    out.problem = "holds other contents or shapes than this run";
    return out;
  }
  std::memcpy(&scalars, blobs[0].data.data(), sizeof scalars);
  for (std::size_t i = 0; i < named.size(); ++i) {
    std::memcpy(named[i].second->data(), blobs[1 + i].data.data(), blobs[1 + i].data.size());
  }
  into.iterations = scalars.iterations;
  into.seconds = {scalars.seconds[0], scalars.seconds[1], scalars.seconds[2], scalars.seconds[3]};
  out.loaded = true;
  return out;
}

std::int64_t RunCheckpoint::resume(RecycledState& into, std::int64_t iterations) const {
  const Load load = this->load(into);
  if (!load.problem.empty()) {
    warn("ignoring checkpoint " + file_.string() + " (" + load.problem +
         "); starting from the first iteration");
  }
  if (!load.loaded) return 0;
  // The key holds the recycles, so only a bug writes another count.
  if (into.iterations < 1 || into.iterations >= iterations) {
    throw InternalError("checkpoint " + file_.string() + " holds iteration " +
                        std::to_string(into.iterations) + " of a run of " +
                        std::to_string(iterations));
  }
  if (progress_) {
    progress_("resuming after iteration " + std::to_string(into.iterations) + " of " +
              std::to_string(iterations) + " from " + file_.string());
  }
  return into.iterations;
}

void RunCheckpoint::warn(const std::string& message) const {
  if (progress_) {
    progress_("warning: " + message);
  } else {
    std::fprintf(stderr, "cpufold: warning: %s\n", message.c_str());
  }
}

void RunCheckpoint::remove() const {
  std::error_code ec;
  fs::remove(file_, ec);
}

}  // namespace cpufold
