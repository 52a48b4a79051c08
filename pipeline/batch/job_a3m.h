// {job}.a3m: the MSA a job was folded with, as ColabFold saves it beside the results.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "io/a3m.h"

namespace cpufold {

// One A3M file: its text unchanged. No MSA: the query alone under ColabFold's header ">101".
// Several files (or a Stockholm one): every row in the order the model saw them (the files
// concatenated, exact duplicate rows dropped, as make_raw_features does), under its original
// description; insertions relative to the query are not kept (the parsed rows hold only
// their counts).
std::string job_a3m(std::string_view query, std::span<const std::filesystem::path> files,
                    std::span<const Msa> msas);

}  // namespace cpufold
