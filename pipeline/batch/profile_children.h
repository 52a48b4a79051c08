// `cpufold profile` measures each length in a fresh child process (this binary again, see
// command_profile.cpp), so that one length's heap does not inflate the next one's peak and a
// length that runs out of memory fails alone.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pipeline/runner/length_profile.h"

namespace cpufold {

struct ProfiledLength {
  LengthProfile profile;  // ok = false with the reason in error when the child failed
  // The child's outcome as cpufold's exit status: 0 ok, 2 input, 3 weights, 4 memory (also a
  // child killed by SIGKILL, what an OOM killer sends), 5 internal (also any other signal).
  int exit_code = 0;
};

// Runs /proc/self/exe with `child_args(n_res)` (the arguments after the program name) for each
// length in turn; the child prints profile_record lines (profile_record.h). `sizes` gives the
// sizes a failed length is recorded with (n_res aside); `block_done` sees each block of a
// blocks-only child as the child reports it (while it runs on), `done` each length as it ends.
std::vector<ProfiledLength> profile_in_children(
    std::span<const std::int64_t> lengths, const ProfileSizes& sizes,
    const std::function<std::vector<std::string>(std::int64_t n_res)>& child_args,
    const std::function<void(const ProfiledBlock&, std::int64_t n_res, std::size_t index)>&
        block_done,
    const std::function<void(const ProfiledLength&, std::size_t index)>& done);

// One line for the progress log: predicted vs measured and their ratio, or why it failed.
std::string profile_progress_line(const ProfiledLength& p, std::size_t index, std::size_t count);
// The same for one block of a blocks-only length, as it ends.
std::string profile_block_progress_line(const ProfiledBlock& b, std::int64_t n_res,
                                        std::size_t index, std::size_t count);

}  // namespace cpufold
