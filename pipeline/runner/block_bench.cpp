#include "pipeline/runner/block_bench.h"

#include <functional>
#include <random>

namespace cpufold {
namespace {

void fill_normal(const Tensor& t, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  if (t.dtype() == DType::bf16) {
    bf16* p = t.data_as<bf16>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = bf16(dist(rng));
    return;
  }
  float* p = t.data_as<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
}

void fill(const Tensor& t, float v) {
  float* p = t.data_as<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = v;
}

}  // namespace

EvoformerBlock make_bench_block(const WeightStore& store, const ModelConfig& c,
                                EvoformerBlock::Kind kind, DType precision) {
  return EvoformerBlock(ParamScope(store).with_precision(precision), c, kind, 0);
}

BlockBench::BlockBench(const EvoformerBlock& block, const ModelConfig& c, EvoformerBlock::Kind kind,
                       DType precision, std::int64_t s, std::int64_t n, Tier& msa_tier,
                       Tier& pair_tier)
    : BlockBench(nullptr, &block, c, kind, precision, s, n, msa_tier, pair_tier) {}

BlockBench::BlockBench(const WeightStore& store, const ModelConfig& c, EvoformerBlock::Kind kind,
                       DType precision, std::int64_t s, std::int64_t n, Tier& msa_tier,
                       Tier& pair_tier)
    : BlockBench(
          std::make_unique<const EvoformerBlock>(make_bench_block(store, c, kind, precision)),
          nullptr, c, kind, precision, s, n, msa_tier, pair_tier) {}

BlockBench::BlockBench(std::unique_ptr<const EvoformerBlock> owned, const EvoformerBlock* borrowed,
                       const ModelConfig& c, EvoformerBlock::Kind kind, DType precision,
                       std::int64_t s, std::int64_t n, Tier& msa_tier, Tier& pair_tier)
    : owned_(std::move(owned)),
      block_(borrowed != nullptr ? *borrowed : *owned_),
      config_(c),
      kind_(kind),
      precision_(precision),
      n_seq_(s),
      n_res_(n),
      msa_spilled_(&msa_tier != &dram_tier()),
      pair_spilled_(&pair_tier != &dram_tier()),
      arena_bytes_(block_arena_bytes(block_, c, shape(0))),
      msa_tier_(msa_tier),
      msa_("bench-msa", msa_tier, arena_bytes_.msa),
      pair_("bench-pair", pair_tier, arena_bytes_.pair) {
  const std::int64_t c_m = kind == EvoformerBlock::Kind::extra_msa ? c.c_e : c.c_m;
  m_ = msa_.allocate(block_msa_type(kind, precision), {s, n, c_m});
  msa_mask_ = msa_.allocate(DType::f32, {s, n});
  z_ = pair_.allocate(DType::f32, {n, n, c.c_z});
  pair_mask_ = pair_.allocate(DType::f32, {n, n});
  fill_normal(m_, 1);
  fill_normal(z_, 2);
  fill(msa_mask_, 1.f);
  fill(pair_mask_, 1.f);
}

BlockShape BlockBench::shape(std::int64_t chunk) const {
  return {kind_, precision_, n_seq_, n_res_, chunk, msa_spilled_};
}

double BlockBench::run(std::int64_t chunk) {
  // Written back before the clock starts too, so every timed run reads its input from the file.
  const auto write_back = [&] {
    if (msa_spilled_) msa_.evict(m_.data(), msa_.capacity());
    if (pair_spilled_) pair_.evict(z_.data(), pair_.capacity());
  };
  write_back();
  // The scratch stays mapped from one run to the next, as the model's one arena does: a fresh
  // mapping per run would time ~25,000 page faults per block at N=256 that a real run pays once.
  if (!scratch_ || scratch_chunk_ != chunk) {
    scratch_.reset();  // a new chunk gets a new arena, so its high water is its own
    const BlockArenaBytes bytes = block_arena_bytes(block_, config_, shape(chunk));
    scratch_.emplace("bench-scratch", dram_tier(), bytes.scratch);
    edges_.reset();
    if (msa_spilled_) edges_.emplace("bench-edges", msa_tier_, bytes.edges);
    scratch_chunk_ = chunk;
    // Faulted in before the clock starts even without a warm-up run: at N = 2,500 its 3.2 GiB
    // cost seconds of page faults, which a model run pays once for all its blocks.
    scratch_->populate();
  }
  Arena& scratch = *scratch_;
  scratch.release_to(0);
  const std::function<void(std::string_view)> on_module = [&](std::string_view next) {
    modules_.begin(next);
  };
  const RunContext ctx{&scratch, chunk,  nullptr,   0, edges_ ? &*edges_ : nullptr,
                       nullptr,  &gemm_, &on_module};
  const WallClock::time_point t0 = WallClock::now();
  block_.forward(m_, z_, msa_mask_, pair_mask_, ctx);
  if (msa_spilled_ || pair_spilled_) on_module("spill write-back");
  write_back();
  on_module("");
  const double seconds = seconds_since(t0);
  scratch_capacity_ = scratch.capacity();
  scratch_high_water_ = scratch.high_water();
  return seconds;
}

}  // namespace cpufold
