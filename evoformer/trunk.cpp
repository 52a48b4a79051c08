#include "evoformer/trunk.h"

#include <algorithm>
#include <cstring>

#include "evoformer/template_embedder.h"
#include "memory/spill_window.h"
#include "memory/tensor_copy.h"
#include "ops/activations.h"
#include "ops/row_chunks.h"

namespace cpufold {
namespace {

void expect_dim(const Tensor& t, int axis, std::int64_t want, const char* feature) {
  if (t.empty() || t.rank() <= axis || t.dim(axis) != want) {
    throw InputError(std::string("feature ") + feature + " has shape " +
                     (t.empty() ? std::string("(missing)") : t.shape().str()) + ", expected " +
                     std::to_string(want) + " on axis " + std::to_string(axis));
  }
}

// pair_mask[i, j] = seq_mask[i]·seq_mask[j]; pair_mask is contiguous (allocated here).
void outer_mask(const Tensor& seq_mask, const Tensor& pair_mask) {
  const std::int64_t n = seq_mask.dim(0), stride = seq_mask.stride(0);
  const float* s = seq_mask.data_as<float>();
  float* dst = pair_mask.data_as<float>();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) dst[i * n + j] = s[i * stride] * s[j * stride];
}

// A spilled activation is written back and dropped from memory after each block: the next
// block reads it back from its file as it goes, so that only what a block is working on stays
// resident, whatever the cgroup (no-op for DRAM).
void evict_spilled(const Tensor& t, const RunContext& ctx) {
  if (ctx.activations != nullptr) ctx.activations->evict(t.data(), t.nbytes());
}

// The template stack in the stacks' precision.
std::unique_ptr<TemplateEmbedder> template_embedder(const ParamScope& root, const ModelConfig& c,
                                                    DType stacks) {
  return std::make_unique<TemplateEmbedder>(root.with_precision(stacks).at("evoformer"), c);
}

// The context of one family's phase: its chunk.
RunContext with_chunk(const RunContext& ctx, std::int64_t chunk) {
  RunContext c = ctx;
  c.chunk = chunk;
  return c;
}

}  // namespace

Trunk::Trunk(const ParamScope& root, const ModelConfig& c, DType stacks)
    : config_(c),
      extra_type_(stacks),
      input_embedder_(root.at("evoformer"), c.target_feat_dim, c.msa_feat_dim, c.c_m, c.c_z,
                      c.max_relative_feature),
      recycling_embedder_(root.at("evoformer"), c.c_m, c.c_z, c.recycle_pos_bins),
      template_embedder_(c.templates ? template_embedder(root, c, stacks) : nullptr),
      extra_msa_embedder_(root.at("evoformer"), c.extra_msa_feat_dim, c.c_e),
      single_activations_(root.at("evoformer/single_activations").linear({c.c_m, c.c_s})) {
  const ParamScope stack_root = root.with_precision(stacks);
  for (std::int64_t i = 0; i < c.n_extra_msa_blocks; ++i)
    extra_msa_stack_.emplace_back(stack_root, c, EvoformerBlock::Kind::extra_msa, i);
  for (std::int64_t i = 0; i < c.n_evoformer_blocks; ++i)
    evoformer_stack_.emplace_back(stack_root, c, EvoformerBlock::Kind::evoformer, i);
}

Trunk::~Trunk() = default;

const EvoformerBlock& Trunk::first_block(EvoformerBlock::Kind kind) const {
  const bool extra = kind == EvoformerBlock::Kind::extra_msa;
  const std::vector<EvoformerBlock>& stack = extra ? extra_msa_stack_ : evoformer_stack_;
  if (stack.empty()) {
    throw WeightsError(std::string("the model has no ") + (extra ? "extra-MSA" : "Evoformer") +
                       " blocks (its parameter file has none)");
  }
  return stack.front();
}

TrunkDims Trunk::dims_of(const TrunkInputs& in, const ModelConfig& c) {
  const std::int64_t n = in.n_res();
  expect_dim(in.target_feat, 0, n, "target_feat");
  expect_dim(in.target_feat, 1, c.target_feat_dim, "target_feat");
  expect_dim(in.residue_index, 0, n, "residue_index");
  expect_dim(in.seq_mask, 0, n, "seq_mask");
  expect_dim(in.msa_feat, 1, n, "msa_feat");
  expect_dim(in.msa_feat, 2, c.msa_feat_dim, "msa_feat");
  expect_dim(in.msa_mask, 0, in.n_seq(), "msa_mask");
  expect_dim(in.msa_mask, 1, n, "msa_mask");
  expect_dim(in.extra_msa, 1, n, "extra_msa");
  for (const Tensor* t : {&in.extra_has_deletion, &in.extra_deletion_value, &in.extra_msa_mask}) {
    expect_dim(*t, 0, in.n_extra(), "extra MSA features");
    expect_dim(*t, 1, n, "extra MSA features");
  }
  if (in.n_seq() < 1) throw InputError("the MSA features have no rows (need at least the query)");
  const std::int64_t n_templ = c.templates ? in.n_templ() : 0;
  return {n, in.n_seq(), in.n_extra(), n_templ};
}

BufferList<TrunkState> Trunk::state_buffers(const TrunkDims& d) const {
  const ModelConfig& c = config_;
  return {{&TrunkState::msa_first_row, DType::f32, Shape{d.n_res, c.c_m}},
          {&TrunkState::pair, DType::f32, Shape{d.n_res, d.n_res, c.c_z}},
          {&TrunkState::single, DType::f32, Shape{d.n_res, c.c_s}},
          {&TrunkState::prev_pseudo_beta, DType::f32, Shape{d.n_res, 3}}};
}

BufferList<TrunkState> Trunk::msa_buffers(const TrunkDims& d) const {
  return {{&TrunkState::msa, DType::f32, Shape{d.n_seq + d.n_templ, d.n_res, config_.c_m}}};
}

BufferList<Trunk::Masks> Trunk::mask_buffers(const TrunkDims& d) const {
  return BufferList<Masks>{{&Masks::msa_mask, DType::f32, Shape{d.n_seq + d.n_templ, d.n_res}},
                           {&Masks::pair_mask, DType::f32, Shape{d.n_res, d.n_res}}}
      .add_if(template_embedder_ && d.n_templ > 0,
              {&Masks::template_rows, DType::f32, Shape{d.n_templ, d.n_res, config_.c_m}});
}

BufferList<Trunk::ExtraMsa> Trunk::extra_msa_buffers(const TrunkDims& d) const {
  return {{&ExtraMsa::e, extra_type_, Shape{d.n_extra, d.n_res, config_.c_e}}};
}

BufferList<Trunk::TracedPair> Trunk::traced_pair_buffers(std::int64_t n_res) const {
  return {{&TracedPair::z, DType::f32, Shape{n_res, n_res, config_.c_z}}};
}

std::size_t Trunk::state_bytes(const TrunkDims& d) const {
  return state_buffers(d).bytes();
}

TrunkState Trunk::allocate_state(const TrunkDims& d, Arena& arena) const {
  const TrunkState s = state_buffers(d).allocate(arena);
  for (const Tensor* t : {&s.msa_first_row, &s.pair, &s.single, &s.prev_pseudo_beta})
    std::memset(t->data(), 0, t->nbytes());
  return s;
}

std::size_t Trunk::msa_bytes(const TrunkDims& d) const {
  return msa_buffers(d).bytes();
}

std::size_t Trunk::extra_msa_bytes(const TrunkDims& d) const {
  return extra_msa_buffers(d).bytes();
}

std::size_t Trunk::msa_window_bytes(const TrunkDims& d, const ChunkSizes& chunks) const {
  std::size_t bytes = 0;
  for (const EvoformerBlock& b : extra_msa_stack_) {
    bytes =
        std::max(bytes, b.spill_window_bytes(d.n_extra, d.n_res, chunks.extra_msa, extra_type_));
  }
  for (const EvoformerBlock& b : evoformer_stack_) {
    bytes = std::max(
        bytes, b.spill_window_bytes(d.n_seq + d.n_templ, d.n_res, chunks.evoformer, DType::f32));
  }
  return bytes;
}

std::size_t Trunk::pair_window_bytes(const TrunkDims& d, const ChunkSizes& chunks) const {
  // Row passes over the pair in either stack, each at its own chunk, and the outer product
  // means' passes.
  const auto rows = [&](std::int64_t chunk) {
    return SpillWindow::resident_bytes(1, d.n_res, f32_bytes({d.n_res, config_.c_z}),
                                       detail::chunk_rows(d.n_res, chunk));
  };
  std::size_t bytes = std::max(rows(chunks.evoformer), rows(chunks.extra_msa));
  for (const EvoformerBlock& b : extra_msa_stack_) {
    bytes = std::max(bytes, b.pair_window_bytes(d.n_extra, d.n_res, chunks.extra_msa));
  }
  for (const EvoformerBlock& b : evoformer_stack_) {
    bytes = std::max(bytes, b.pair_window_bytes(d.n_seq + d.n_templ, d.n_res, chunks.evoformer));
  }
  return bytes;
}

std::size_t Trunk::spill_traffic_bytes(const TrunkDims& d, const ChunkSizes& chunks,
                                       bool pair_spilled, std::size_t cache_bytes) const {
  std::size_t bytes = 0;
  for (const EvoformerBlock& b : extra_msa_stack_)
    bytes += b.spill_traffic_bytes(d.n_extra, d.n_res, chunks.extra_msa, extra_type_, pair_spilled,
                                   cache_bytes);
  for (const EvoformerBlock& b : evoformer_stack_) {
    bytes += b.spill_traffic_bytes(d.n_seq + d.n_templ, d.n_res, chunks.evoformer, DType::f32,
                                   pair_spilled, cache_bytes);
  }
  if (template_embedder_ && d.n_templ > 0) {
    bytes += static_cast<std::size_t>(config_.n_template_blocks) * 5 * 2 *
             template_embedder_->activation_bytes(d.n_templ, d.n_res);
  }
  return bytes;
}

// Mirrors forward()'s phases: the embedders before the masks exist; then with the masks and the
// template rows resident the template stack, the extra-MSA stack with its activations, and with
// the MSA representation the input embedder's MSA part and the Evoformer stack.
TrunkBytes Trunk::forward_bytes(const TrunkDims& d, const ChunkSizes& chunks, bool apart,
                                bool tracing) const {
  const ModelConfig& c = config_;
  const std::int64_t rows = d.n_seq + d.n_templ;
  const std::size_t before_masks = std::max(
      // With tracing, the input embedder's pair goes to its own buffer first.
      input_embedder_.scratch_bytes(d.n_seq, d.n_res) +
          (tracing ? traced_pair_buffers(d.n_res).bytes() : 0),
      RecyclingEmbedder::scratch_bytes(d.n_res, c.c_m, c.c_z, false, chunks.evoformer));
  const std::size_t masks = mask_buffers(d).bytes();
  // Apart (a spilled plan), the triangle multiplications' right edges go to the activations.
  std::size_t templates = 0, template_pairs = 0, template_edge = 0;
  if (template_embedder_ && d.n_templ > 0) {
    templates = template_embedder_->transient_bytes(d.n_templ, d.n_res, chunks.templates,
                                                    /*edge_apart=*/apart, tracing);
    template_pairs = template_embedder_->activation_bytes(d.n_templ, d.n_res);
    template_edge = template_embedder_->edge_bytes(d.n_res);
  }
  std::size_t extra = ExtraMsaEmbedder::scratch_bytes(d.n_extra, d.n_res), extra_edge = 0;
  for (const EvoformerBlock& b : extra_msa_stack_) {
    extra =
        std::max(extra, b.scratch_bytes(d.n_extra, d.n_res, chunks.extra_msa, extra_type_, apart));
    extra_edge = std::max(extra_edge, b.apart_bytes(d.n_extra, d.n_res, chunks.extra_msa));
  }
  std::size_t evoformer = std::max(input_embedder_.scratch_bytes(d.n_seq, d.n_res),
                                   single_activations_.scratch_bytes(d.n_res));
  std::size_t evoformer_edge = 0;
  for (const EvoformerBlock& b : evoformer_stack_) {
    evoformer =
        std::max(evoformer, b.scratch_bytes(rows, d.n_res, chunks.evoformer, DType::f32, apart));
    evoformer_edge = std::max(evoformer_edge, b.apart_bytes(rows, d.n_res, chunks.evoformer));
  }
  const std::size_t e = extra_msa_bytes(d), m = msa_bytes(d);
  TrunkBytes t;
  if (apart) {
    t.activations = std::max({template_pairs + template_edge, e + extra_edge, m + evoformer_edge});
    t.scratch = std::max(before_masks, masks + std::max({templates, extra, evoformer}));
    t.retained = masks;
  } else {
    t.scratch = std::max(before_masks,
                         masks + std::max({template_pairs + templates, e + extra, m + evoformer}));
    t.retained = masks + m;
  }
  return t;
}

void Trunk::embed_pair(const TrunkInputs& in, TrunkState& state, const RunContext& ctx) const {
  Arena& arena = ctx.arena();
  // AF2 Alg. 32: the recycled first row and pair become their updates in place.
  recycling_embedder_.forward(state.msa_first_row, state.pair, state.prev_pseudo_beta,
                              state.msa_first_row, state.pair, /*accumulate=*/false, ctx);
  // AF2 Alg. 3, the pair half (the MSA half waits until the extra-MSA stack is done).
  if (ctx.tracer != nullptr) {
    ArenaScope trace_scope(arena);
    const Tensor z = traced_pair_buffers(state.pair.dim(0)).allocate(arena).z;
    input_embedder_.embed_pair(in.target_feat, in.residue_index, z, /*accumulate=*/false, ctx);
    ctx.trace("input_embedder", "out_1", z);
    add_inplace(state.pair, z);
  } else {
    input_embedder_.embed_pair(in.target_feat, in.residue_index, state.pair, true, ctx);
  }
}

void Trunk::run_extra_msa_stack(const TrunkInputs& in, TrunkState& state, const Tensor& pair_mask,
                                const RunContext& ctx, std::int64_t chunk) const {
  const TrunkDims d = dims_of(in, config_);
  const RunContext extra_ctx = with_chunk(ctx, chunk);
  Arena& activations = ctx.activation_arena();
  ArenaScope extra_scope(activations);
  const Tensor e = extra_msa_buffers(d).allocate(activations).e;
  extra_msa_embedder_.forward(in.extra_msa, in.extra_has_deletion, in.extra_deletion_value, e, ctx);
  for (std::size_t i = 0; i < extra_msa_stack_.size(); ++i) {
    const std::string name = "extra_msa_block_" + std::to_string(i);
    ctx.trace(name, "in_0", e);
    ctx.trace(name, "in_1", state.pair);
    extra_msa_stack_[i].forward(e, state.pair, in.extra_msa_mask, pair_mask, extra_ctx);
    ctx.trace(name, "out_0", e);
    ctx.trace(name, "out_1", state.pair);
    evict_spilled(e, ctx);
  }
}

void Trunk::embed_msa(const TrunkInputs& in, TrunkState& state, const Tensor& template_rows,
                      const RunContext& ctx) const {
  const TrunkDims d = dims_of(in, config_);
  msa_buffers(d).allocate_into(ctx.activation_arena(), state);
  const Tensor cluster_rows = state.msa.slice(0, 0, d.n_seq);
  input_embedder_.embed_msa(in.target_feat, in.msa_feat, cluster_rows, ctx);
  ctx.trace("input_embedder", "out_0", cluster_rows);
  add_inplace(cluster_rows.select(0, 0), state.msa_first_row);
  if (!template_rows.empty())
    copy_tensor(template_rows, state.msa.slice(0, d.n_seq, d.n_seq + d.n_templ));
}

void Trunk::run_evoformer_stack(TrunkState& state, const Tensor& msa_mask, const Tensor& pair_mask,
                                const RunContext& ctx) const {
  for (std::size_t i = 0; i < evoformer_stack_.size(); ++i) {
    const std::string name = "evoformer_block_" + std::to_string(i);
    ctx.trace(name, "in_0", state.msa);
    ctx.trace(name, "in_1", state.pair);
    evoformer_stack_[i].forward(state.msa, state.pair, msa_mask, pair_mask, ctx);
    ctx.trace(name, "out_0", state.msa);
    ctx.trace(name, "out_1", state.pair);
    evict_spilled(state.msa, ctx);
  }
}

void Trunk::forward(const TrunkInputs& in, TrunkState& state, const RunContext& run_ctx,
                    const ChunkSizes& chunks) const {
  const TrunkDims d = dims_of(in, config_);
  // The embedders slice with the Evoformer's chunk (their transients are pair-sized, as its).
  const RunContext ctx = with_chunk(run_ctx, chunks.evoformer);
  Arena& arena = ctx.arena();
  ctx.phase("embedders");
  embed_pair(in, state, ctx);

  const Masks masks = mask_buffers(d).allocate(arena);
  const Tensor &msa_mask = masks.msa_mask, &pair_mask = masks.pair_mask;
  copy_tensor(in.msa_mask, msa_mask.slice(0, 0, d.n_seq));
  outer_mask(in.seq_mask, pair_mask);

  // AF2 Alg. 2 lines 7-10: templates add to the pair and make MSA rows, kept here until the
  // MSA representation exists.
  const Tensor& template_rows = masks.template_rows;
  if (!template_rows.empty()) {
    ctx.phase("templates");
    template_embedder_->forward(in, state.pair, pair_mask, template_rows,
                                msa_mask.slice(0, d.n_seq, d.n_seq + d.n_templ),
                                with_chunk(ctx, chunks.templates));
  }

  // AF2 Alg. 18: the extra-MSA stack updates the pair.
  ctx.phase("extra_msa");
  run_extra_msa_stack(in, state, pair_mask, ctx, chunks.extra_msa);

  // AF2 Alg. 3, the MSA half, plus the recycled first row; then the template rows.
  ctx.phase("embedders");
  embed_msa(in, state, template_rows, ctx);

  // AF2 Alg. 6 x n_blocks.
  ctx.phase("evoformer");
  run_evoformer_stack(state, msa_mask, pair_mask, ctx);

  // AF2 Alg. 2 line 15: single representation from the first MSA row.
  std::memcpy(state.msa_first_row.data(), state.msa.select(0, 0).data(),
              state.msa_first_row.nbytes());
  single_activations_.forward(state.msa_first_row, state.single, arena);
  ctx.trace("evoformer_single_linear", "out", state.single);
}

}  // namespace cpufold
