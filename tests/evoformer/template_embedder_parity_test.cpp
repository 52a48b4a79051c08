// Parity of the template embedding (monomer AF2, model_1_ptm files) with the reference traces:
// pair features + embedding2d, pointwise attention, torsion-angle rows, and the whole embedder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "embedder_parity_util.h"
#include "evoformer/template_embedder.h"
#include "evoformer/template_pair_features.h"
#include "evoformer/template_pointwise_attention.h"
#include "evoformer/template_single_embedding.h"
#include "evoformer/trunk_inputs.h"
#include "memory/tensor_copy.h"
#include "ops/compute_precision.h"
#include "ops/layer_norm.h"
#include "ops/linear.h"
#include "ops/param_scope.h"

namespace cpufold::testing {
namespace {

constexpr char kSingleTemplate[] = "evoformer/template_embedding/single_template_embedding";

class TemplateParity : public ReferenceFixture {
 protected:
  // The template features of iteration k (and what else TrunkInputs needs for templates).
  TrunkInputs template_inputs(std::int64_t k) {
    TrunkInputs in;
    in.template_aatype = feature("template_aatype", k, DType::i64);
    in.template_all_atom_positions = feature("template_all_atom_positions", k);
    in.template_all_atom_mask = feature("template_all_atom_mask", k);
    in.template_mask = feature("template_mask", k);
    in.template_pseudo_beta = feature("template_pseudo_beta", k);
    in.template_pseudo_beta_mask = feature("template_pseudo_beta_mask", k);
    in.template_torsion_angles_sin_cos = feature("template_torsion_angles_sin_cos", k);
    in.template_alt_torsion_angles_sin_cos = feature("template_alt_torsion_angles_sin_cos", k);
    in.template_torsion_angles_mask = feature("template_torsion_angles_mask", k);
    return in;
  }

  // The pair representation the template embedder sees at iteration k: the input embedding
  // plus the recycling update, as OpenFold adds them.
  Tensor query_pair(std::int64_t k) {
    const Tensor z = load(trace("input_embedder", k, "out_1"));
    const Tensor r = load(trace("recycling_embedder", k, "out_1"));
    float* pz = z.data_as<float>();
    const float* pr = r.data_as<float>();
    for (std::int64_t i = 0; i < z.numel(); ++i) pz[i] += pr[i];
    return z;
  }

  TemplatePairEmbedder pair_embedder() const {
    return TemplatePairEmbedder(ParamScope(*store_, kSingleTemplate),
                                config_.template_pair_feat_dim, config_.c_t);
  }
  TemplatePointwiseAttention pointwise_attention() const {
    return TemplatePointwiseAttention(ParamScope(*store_, "evoformer/template_embedding/attention"),
                                      config_.c_z, config_.c_t,
                                      config_.template_pointwise_attention);
  }
};

TEST_P(TemplateParity, PairEmbeddingMatchesTemplateStackInput) {
  if (!open()) return;
  ASSERT_TRUE(config_.templates);
  const TemplatePairEmbedder embedder = pair_embedder();
  EXPECT_EQ(embedder.bins().size(), 39);
  for (std::int64_t k = 0; k < iterations_; ++k) {
    ArenaScope scope(data_);
    const TrunkInputs in = template_inputs(k);
    const std::int64_t n_templ = in.n_templ(), n_res = in.template_aatype.dim(1);
    const Tensor t = data_.allocate(DType::f32, {n_templ, n_res, n_res, config_.c_t});
    for (std::int64_t i = 0; i < n_templ; ++i) {
      embedder.forward(in, i, t.select(0, i), context(0, static_cast<int>(k)));
    }
    expect_matches(trace("template_pair_block_0", k, "in_0"), t);
    EXPECT_EQ(scratch_.used(), 0u);
  }
}

// The gather equals embedding2d applied to the explicit 88 channels.
TEST_P(TemplateParity, PairEmbeddingEqualsLinearOfExplicitFeatures) {
  if (!open()) return;
  const TemplatePairEmbedder embedder = pair_embedder();
  const Linear embedding2d = (ParamScope(*store_, kSingleTemplate) / "embedding2d")
                                 .linear({config_.template_pair_feat_dim, config_.c_t});
  const TrunkInputs in = template_inputs(0);
  // Make the masks interesting: a residue without backbone and one without pseudo-beta.
  in.template_all_atom_mask.at<float>({0, 3, 1}) = 0.f;
  in.template_pseudo_beta_mask.at<float>({1, 5}) = 0.f;
  const std::int64_t n_res = in.template_aatype.dim(1), c_t = config_.c_t;
  for (std::int64_t t = 0; t < in.n_templ(); ++t) {
    ArenaScope scope(data_);
    const TemplateResidues res = template_residues(in, t, data_);
    const Tensor features = data_.allocate(DType::f32, {n_res, n_res, embedder.c_in()});
    // Two row blocks, to exercise row_begin.
    build_template_pair_features(res, embedder.bins(), 0, features.slice(0, 0, 7));
    build_template_pair_features(res, embedder.bins(), 7, features.slice(0, 7, n_res));
    // Spot checks of the layout.
    const std::int64_t aa_j = res.aatype.at<std::int64_t>({2}),
                       aa_i = res.aatype.at<std::int64_t>({1});
    EXPECT_EQ(features.at<float>({1, 2, 39 + 1 + aa_j}), 1.f);
    EXPECT_EQ(features.at<float>({1, 2, 39 + 1 + 22 + aa_i}), 1.f);
    EXPECT_EQ(features.at<float>({1, 2, 87}), 1.f);
    EXPECT_EQ(features.at<float>({1, 1, 0}), 0.f);  // d = 0: no bin
    if (t == 0) {
      EXPECT_EQ(features.at<float>({3, 2, 87}), 0.f);
    }
    const Tensor want = data_.allocate(DType::f32, {n_res, n_res, c_t});
    embedding2d.forward(features, want, scratch_);
    const Tensor got = data_.allocate(DType::f32, {n_res, n_res, c_t});
    embedder.forward(in, t, got, context());
    std::vector<float> ref(static_cast<std::size_t>(want.numel()));
    std::memcpy(ref.data(), want.data(), want.nbytes());
    EXPECT_TRUE(matches_reference("gather vs Linear(features), template " + std::to_string(t), got,
                                  ref, want.shape(), {1e-6, 1e-6}));
  }
}

TEST_P(TemplateParity, PointwiseAttentionOfReferenceStackOutput) {
  if (!open()) return;
  const TemplatePointwiseAttention attention = pointwise_attention();
  const LayerNorm output_norm =
      (ParamScope(*store_, kSingleTemplate) / "output_layer_norm").layer_norm(config_.c_t);
  const std::string last_block =
      "template_pair_block_" + std::to_string(config_.n_template_blocks - 1);
  for (std::int64_t k = 0; k < iterations_; ++k) {
    SCOPED_TRACE("iteration " + std::to_string(k));
    ArenaScope scope(data_);
    const Tensor t = load(trace(last_block, k, "out"));
    output_norm.forward(t, t);
    const Tensor z = query_pair(k);
    const Tensor mask = feature("template_mask", k);
    const std::string want = trace("template_embedder", k, "out/template_pair_embedding");
    std::vector<float> unchunked;
    for (std::int64_t chunk : {0, 1, 5}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      const Tensor out = data_.allocate(DType::f32, z.shape());
      attention.forward(t, z, mask, out, /*accumulate=*/false, context(chunk, static_cast<int>(k)));
      expect_matches(want, out);
      EXPECT_EQ(scratch_.used(), 0u);
      if (chunk == 0) {
        unchunked.assign(out.data_as<float>(), out.data_as<float>() + out.numel());
      } else {
        EXPECT_TRUE(matches_reference("chunked vs unchunked", out, unchunked, out.shape(),
                                      kChunkInvarianceTolerance));
      }
    }
    // In place into z: z + embedding.
    std::vector<float> z_plus = ref_->read_f32(want);
    const float* pz = z.data_as<float>();
    for (std::size_t i = 0; i < z_plus.size(); ++i) z_plus[i] += pz[i];
    attention.forward(t, z, mask, z, /*accumulate=*/true, context(3, static_cast<int>(k)));
    EXPECT_TRUE(matches_reference("z + template pair embedding", z, z_plus, z.shape(),
                                  kRepresentationTolerance));
  }
}

TEST_P(TemplateParity, PointwiseAttentionIgnoresMaskedTemplates) {
  if (!open()) return;
  const TemplatePointwiseAttention attention = pointwise_attention();
  const std::string last_block =
      "template_pair_block_" + std::to_string(config_.n_template_blocks - 1);
  const Tensor t = load(trace(last_block, 0, "out"));
  const Tensor z = query_pair(0);
  const std::int64_t n_templ = t.dim(0);
  // Template 1 masked out == attention over template 0 alone.
  const Tensor mask = data_.allocate(DType::f32, {n_templ});
  for (std::int64_t i = 0; i < n_templ; ++i) mask.at<float>({i}) = i == 1 ? 0.f : 1.f;
  const Tensor got = data_.allocate(DType::f32, z.shape());
  attention.forward(t, z, mask, got, false, context());
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < n_templ; ++i) {
    if (i != 1) keep.push_back(i);
  }
  const Tensor t_kept = data_.allocate(
      DType::f32, {static_cast<std::int64_t>(keep.size()), t.dim(1), t.dim(2), t.dim(3)});
  for (std::size_t i = 0; i < keep.size(); ++i) {
    std::memcpy(t_kept.select(0, static_cast<std::int64_t>(i)).data(), t.select(0, keep[i]).data(),
                t.select(0, keep[i]).nbytes());
  }
  const Tensor ones = data_.allocate(DType::f32, {t_kept.dim(0)});
  for (std::int64_t i = 0; i < ones.numel(); ++i) ones.at<float>({i}) = 1.f;
  const Tensor want = data_.allocate(DType::f32, z.shape());
  attention.forward(t_kept, z, ones, want, false, context());
  std::vector<float> ref(static_cast<std::size_t>(want.numel()));
  std::memcpy(ref.data(), want.data(), want.nbytes());
  EXPECT_TRUE(matches_reference("template 1 masked", got, ref, want.shape(), {1e-6, 1e-5}));
}

TEST_P(TemplateParity, SingleEmbeddingMatchesEveryIteration) {
  if (!open()) return;
  const TemplateSingleEmbedding embedder(ParamScope(*store_, "evoformer"),
                                         config_.template_single_feat_dim, config_.c_m);
  for (std::int64_t k = 0; k < iterations_; ++k) {
    ArenaScope scope(data_);
    const TrunkInputs in = template_inputs(k);
    const std::int64_t n_templ = in.n_templ(), n_res = in.template_aatype.dim(1);
    // The template rows of an MSA buffer that also holds 8 cluster rows.
    const Tensor m = data_.allocate(DType::f32, {8 + n_templ, n_res, config_.c_m});
    const Tensor mask = data_.allocate(DType::f32, {8 + n_templ, n_res});
    embedder.forward(in, m.slice(0, 8, 8 + n_templ), mask.slice(0, 8, 8 + n_templ),
                     context(0, static_cast<int>(k)));
    expect_matches(trace("template_embedder", k, "out/template_single_embedding"),
                   m.slice(0, 8, 8 + n_templ));
    const std::string msa_mask = "masks/iter_" + std::to_string(k) + "/evoformer_msa_mask";
    const Tensor ref_mask = load(msa_mask);
    const std::int64_t n_clust = ref_mask.dim(0) - n_templ;
    for (std::int64_t t = 0; t < n_templ; ++t) {
      for (std::int64_t i = 0; i < n_res; ++i) {
        EXPECT_EQ(mask.at<float>({8 + t, i}), ref_mask.at<float>({n_clust + t, i}));
      }
    }
    EXPECT_EQ(scratch_.used(), 0u);
  }
}

// Records every traced tensor (copied), by name.
class RecordingTracer : public Tracer {
 public:
  void record(const std::string& name, const Tensor& value) override {
    std::vector<float> v(static_cast<std::size_t>(value.numel()));
    convert_tensor(value, Tensor(v.data(), DType::f32, value.shape()));
    values_[name] = {value.shape(), std::move(v)};
  }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  Tensor view(const std::string& name) {
    auto& [shape, data] = values_.at(name);
    return Tensor(data.data(), DType::f32, shape);
  }

 private:
  std::map<std::string, std::pair<Shape, std::vector<float>>> values_;
};

class TemplateEmbedderParity : public TemplateParity {
 protected:
  Tensor ones(const Shape& shape) {
    const Tensor t = data_.allocate(DType::f32, shape);
    std::fill(t.data_as<float>(), t.data_as<float>() + t.numel(), 1.f);
    return t;
  }
  std::vector<float> copy(const Tensor& t) {
    return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
  }
  // body(embedder, k, inputs, n_templ, n_res) for each recycling iteration k, its tensors in a
  // scope of the data arena.
  template <typename Body>
  void for_each_iteration(Body body) {
    const TemplateEmbedder embedder(*store_, config_);
    for (std::int64_t k = 0; k < iterations_; ++k) {
      SCOPED_TRACE("iteration " + std::to_string(k));
      ArenaScope scope(data_);
      const TrunkInputs in = template_inputs(k);
      body(embedder, k, in, in.n_templ(), in.template_aatype.dim(1));
    }
  }
};

TEST_P(TemplateEmbedderParity, ForwardMatchesEveryIteration) {
  if (!open()) return;
  for_each_iteration([&](const TemplateEmbedder& embedder, std::int64_t k, const TrunkInputs& in,
                         std::int64_t n_templ, std::int64_t n_res) {
    const Tensor pair_mask = ones({n_res, n_res});
    const std::string want_pair = trace("template_embedder", k, "out/template_pair_embedding");
    std::vector<float> chunk0;
    for (std::int64_t chunk : {0, 3}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      const Tensor z = query_pair(k);
      std::vector<float> want = ref_->read_f32(want_pair);
      for (std::int64_t i = 0; i < z.numel(); ++i) {
        want[static_cast<std::size_t>(i)] += z.data_as<float>()[i];
      }
      const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
      const Tensor mask = data_.allocate(DType::f32, {n_templ, n_res});
      embedder.forward(in, z, pair_mask, m, mask, context(chunk, static_cast<int>(k)));
      EXPECT_TRUE(matches_reference("z + template pair embedding", z, want, z.shape(),
                                    kRepresentationTolerance));
      expect_matches(trace("template_embedder", k, "out/template_single_embedding"), m);
      EXPECT_EQ(scratch_.used(), 0u);
      if (chunk == 0) {
        chunk0 = copy(z);
      } else {
        EXPECT_TRUE(matches_reference("chunked vs unchunked", z, chunk0, z.shape(),
                                      kChunkInvarianceTolerance));
      }
    }
  });
}

// With a tracer: the embedding itself and the stacked template pair block states.
TEST_P(TemplateEmbedderParity, TracesMatchTheReference) {
  if (!open()) return;
  for_each_iteration([&](const TemplateEmbedder& embedder, std::int64_t k, const TrunkInputs& in,
                         std::int64_t n_templ, std::int64_t n_res) {
    RecordingTracer tracer;
    RunContext ctx = context(0, static_cast<int>(k));
    ctx.tracer = &tracer;
    const Tensor z = query_pair(k);
    const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
    embedder.forward(in, z, ones({n_res, n_res}), m, Tensor(), ctx);
    for (const std::string& name : {std::string("template_embedder/call_") + std::to_string(k) +
                                        "/out/template_pair_embedding",
                                    std::string("template_embedder/call_") + std::to_string(k) +
                                        "/out/template_single_embedding"}) {
      ASSERT_TRUE(tracer.has(name)) << name;
      expect_matches("trace/" + name, tracer.view(name));
    }
    for (std::int64_t b = 0; b < config_.n_template_blocks; ++b) {
      for (const char* what : {"in_0", "out"}) {
        const std::string name =
            "template_pair_block_" + std::to_string(b) + "/call_" + std::to_string(k) + "/" + what;
        ASSERT_TRUE(tracer.has(name)) << name;
        expect_matches("trace/" + name, tracer.view(name));
      }
    }
  });
}

// No template present: z is untouched, the torsion rows are still written.
TEST_P(TemplateEmbedderParity, AbsentTemplatesLeaveThePairAlone) {
  if (!open()) return;
  const TemplateEmbedder embedder(*store_, config_);
  TrunkInputs in = template_inputs(0);
  const std::int64_t n_templ = in.n_templ(), n_res = in.template_aatype.dim(1);
  std::fill(in.template_mask.data_as<float>(), in.template_mask.data_as<float>() + n_templ, 0.f);
  const Tensor z = query_pair(0);
  const std::vector<float> before = copy(z);
  const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
  embedder.forward(in, z, ones({n_res, n_res}), m, Tensor(), context());
  EXPECT_EQ(copy(z), before);
  expect_matches(trace("template_embedder", 0, "out/template_single_embedding"), m);
}

TEST_P(TemplateEmbedderParity, ScratchStaysWithinPrediction) {
  if (!open()) return;
  const TemplateEmbedder embedder(*store_, config_);
  const TrunkInputs in = template_inputs(0);
  const std::int64_t n_templ = in.n_templ(), n_res = in.template_aatype.dim(1);
  const Tensor pair_mask = ones({n_res, n_res});
  for (std::int64_t chunk : {0, 5}) {
    for (bool traced : {false, true}) {
      Arena arena("exact", dram_tier(), embedder.scratch_bytes(n_templ, n_res, chunk));
      RecordingTracer tracer;
      RunContext ctx;
      ctx.scratch = &arena;
      ctx.chunk = chunk;
      ctx.tracer = traced ? &tracer : nullptr;
      const Tensor z = query_pair(0);
      const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
      EXPECT_NO_THROW(embedder.forward(in, z, pair_mask, m, Tensor(), ctx))
          << "chunk " << chunk << (traced ? " traced" : "");
    }
  }
  // The stage modules on their own.
  const auto exact = [](std::size_t bytes) {
    return Arena("exact", dram_tier(), std::max<std::size_t>(bytes, 64));
  };
  {
    Arena arena = exact(TemplatePairEmbedder::scratch_bytes(n_res));
    RunContext ctx;
    ctx.scratch = &arena;
    const Tensor t = data_.allocate(DType::f32, {n_res, n_res, config_.c_t});
    EXPECT_NO_THROW(pair_embedder().forward(in, 0, t, ctx));
  }
  {
    const TemplateSingleEmbedding single(ParamScope(*store_, "evoformer"),
                                         config_.template_single_feat_dim, config_.c_m);
    Arena arena = exact(single.scratch_bytes(n_templ, n_res));
    RunContext ctx;
    ctx.scratch = &arena;
    const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
    EXPECT_NO_THROW(single.forward(in, m, Tensor(), ctx));
  }
  {
    const TemplatePointwiseAttention attention = pointwise_attention();
    const Tensor t = load(trace("template_pair_block_0", 0, "out"));
    const Tensor z = query_pair(0);
    for (std::int64_t chunk : {0, 5}) {
      for (bool accumulate : {false, true}) {
        Arena arena = exact(attention.scratch_bytes(n_templ, n_res, chunk, accumulate));
        RunContext ctx;
        ctx.scratch = &arena;
        ctx.chunk = chunk;
        const Tensor out = data_.allocate(DType::f32, z.shape());
        EXPECT_NO_THROW(attention.forward(t, z, in.template_mask, out, accumulate, ctx));
      }
    }
  }
}

// The same in fp32 and under bf16 compute (the trunk runs the template stack in the stacks'
// precision), with template_aatype as contiguous i64 (read in place) and as i32 (copied), and
// with the pair activations and right edges in an activations arena of exactly
// activation_bytes + edge_bytes beside transient_bytes. n_res = 24: chunk 5 leaves 4 rows.
TEST_P(TemplateEmbedderParity, ScratchStaysWithinPredictionInEveryPrecision) {
  if (!open()) return;
  const auto exact = [](std::size_t bytes) {
    return Arena("exact", dram_tier(), std::max<std::size_t>(bytes, 64));
  };
  for (const DType precision : {DType::f32, DType::bf16}) {
    if (precision == DType::bf16 && !bf16_support().available) continue;
    const ParamScope evoformer = ParamScope(*store_, "evoformer").with_precision(precision);
    const TemplateEmbedder embedder(evoformer, config_);
    const TemplatePointwiseAttention attention(evoformer / "template_embedding/attention",
                                               config_.c_z, config_.c_t,
                                               config_.template_pointwise_attention);
    const TemplateSingleEmbedding single(evoformer, config_.template_single_feat_dim, config_.c_m);
    for (const DType aatype : {DType::i64, DType::i32}) {
      TrunkInputs in = template_inputs(0);
      in.template_aatype = feature("template_aatype", 0, aatype);
      const std::int64_t n_templ = in.n_templ(), n_res = in.template_aatype.dim(1);
      const Tensor pair_mask = ones({n_res, n_res});
      for (const std::int64_t chunk : {0, 5}) {
        for (const bool apart : {false, true}) {
          for (const bool traced : {false, true}) {
            SCOPED_TRACE(std::string(precision == DType::bf16 ? "bf16" : "fp32") +
                         (aatype == DType::i32 ? " i32" : " i64") + " chunk " +
                         std::to_string(chunk) + (apart ? " apart" : "") +
                         (traced ? " traced" : ""));
            Arena scratch =
                exact(apart ? embedder.transient_bytes(n_templ, n_res, chunk, true, traced)
                            : embedder.scratch_bytes(n_templ, n_res, chunk));
            Arena activations =
                exact(embedder.activation_bytes(n_templ, n_res) + embedder.edge_bytes(n_res));
            RecordingTracer tracer;
            RunContext ctx;
            ctx.scratch = &scratch;
            ctx.activations = apart ? &activations : nullptr;
            ctx.chunk = chunk;
            ctx.tracer = traced ? &tracer : nullptr;
            const Tensor z = query_pair(0);
            const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
            EXPECT_NO_THROW(embedder.forward(in, z, pair_mask, m, Tensor(), ctx));
          }
        }
        for (const bool accumulate : {false, true}) {
          Arena arena = exact(attention.scratch_bytes(n_templ, n_res, chunk, accumulate));
          RunContext ctx;
          ctx.scratch = &arena;
          ctx.chunk = chunk;
          const Tensor t = load(trace("template_pair_block_0", 0, "out"));
          const Tensor out = data_.allocate(DType::f32, {n_res, n_res, config_.c_z});
          EXPECT_NO_THROW(
              attention.forward(t, query_pair(0), in.template_mask, out, accumulate, ctx))
              << "chunk " << chunk;
        }
      }
      {
        Arena arena = exact(TemplatePairEmbedder::scratch_bytes(n_res));
        RunContext ctx;
        ctx.scratch = &arena;
        const Tensor t = data_.allocate(DType::f32, {n_res, n_res, config_.c_t});
        EXPECT_NO_THROW(pair_embedder().forward(in, 0, t, ctx));
      }
      Arena arena = exact(single.scratch_bytes(n_templ, n_res));
      RunContext ctx;
      ctx.scratch = &arena;
      const Tensor m = data_.allocate(DType::f32, {n_templ, n_res, config_.c_m});
      const Tensor mask = data_.allocate(DType::f32, {n_templ, n_res});
      EXPECT_NO_THROW(single.forward(in, m, mask, ctx));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, TemplateParity,
                         ::testing::ValuesIn(with_templates(all_cases())), reference_case_name);
INSTANTIATE_TEST_SUITE_P(Reference, TemplateEmbedderParity,
                         ::testing::ValuesIn(with_templates(all_cases())), reference_case_name);

}  // namespace
}  // namespace cpufold::testing
