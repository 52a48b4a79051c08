// The shapes of the features the trunk reads (TrunkInputs), stated once: the feature pipeline
// and the synthetic inputs of `bench`/`profile` allocate them from these lists, and their
// per-iteration byte counts sum the same lists.
#pragma once

#include <cstdint>

#include "evoformer/trunk_inputs.h"
#include "memory/buffer_list.h"

namespace cpufold {

// Every non-template field, for n_seq cluster rows and n_extra extra rows.
BufferList<TrunkInputs> trunk_input_buffers(std::int64_t n_res, std::int64_t n_seq,
                                            std::int64_t n_extra);
// The template_* fields for n_templ templates.
BufferList<TrunkInputs> template_input_buffers(std::int64_t n_templ, std::int64_t n_res);

}  // namespace cpufold
