// Every option of `colabfold_batch` (ColabFold 1.6.2, colabfold/batch.py at commit
// 3b808f0fa70ac160747eedf862b2da3be9dbcbce) and what `cpufold predict` does with it, so a
// ColabFold command line runs unchanged or fails before any work with what to do instead.
// README's option table is checked against this one by a test.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace cpufold {

enum class OptionStatus {
  implemented,  // does what ColabFold does (for some values, see refused_values)
  no_op,        // accepted and ignored: cpufold already behaves so, or it only matters for
                // something cpufold never does (complexes, GPUs, the MSA server, relaxation)
  off_only,     // accepted with the value that means "off" (or absent); any other refused
  unsupported,  // refused whenever given
};

struct ColabfoldOption {
  std::string_view name;  // "--num-relax"
  bool flag;              // store_true (or nargs='?': a value may follow)
  OptionStatus status;
  // A value cpufold accepts (tests pass it); empty for flags.
  std::string_view accepted_value;
  // The value (or, for flags, presence) cpufold refuses; empty when none is refused. For
  // `implemented` options with refused values the list is comma-separated.
  std::string_view refused_values;
  std::string_view note;     // README's text: what cpufold does with it
  std::string_view instead;  // for refusals: why, and what to do instead
};

// All of colabfold_batch's options (not the two positionals), in batch.py's order.
std::span<const ColabfoldOption> colabfold_batch_options();

// nullptr when `name` is not a colabfold_batch option.
const ColabfoldOption* find_colabfold_option(std::string_view name);

std::string_view status_name(OptionStatus status);

// What was given for the options add_colabfold_options registered: the value, "" for a flag;
// nullopt when absent (or registered by cpufold itself).
class ColabfoldValues {
 public:
  std::optional<std::string> value(const std::string& name) const;

 private:
  friend void add_colabfold_options(CLI::App& cmd, ColabfoldValues& values);
  std::map<std::string, std::string> storage_;  // node-based: CLI11 keeps references
  std::map<std::string, CLI::Option*> options_;
};

// Registers every option of the table that `cmd` does not already define (cpufold's own
// implementations register theirs first), storing what is given in `values`.
void add_colabfold_options(CLI::App& cmd, ColabfoldValues& values);

// InputError "cpufold does not support OPTION [VALUE] yet: WHAT TO DO" for the first refused
// option or value; called before any work. `name` must be in the table.
void refuse_unsupported(const ColabfoldValues& values);
void refuse_unsupported_value(std::string_view name, const std::string& value);

// --max-msa "MAX_SEQ:MAX_EXTRA_SEQ" (e.g. "512:1024"); InputError naming the value otherwise.
struct MaxMsa {
  std::int64_t max_seq = 0, max_extra_seq = 0;
};
MaxMsa parse_max_msa(const std::string& text);

// --msa-mode: true for single_sequence, false for ColabFold's server modes (mmseqs2_uniref_env,
// its default, mmseqs2_uniref_env_envpair, mmseqs2_uniref: every job then needs an MSA of its
// own). InputError for another value.
bool parse_msa_mode(const std::string& text);

// --skip-output "msa,plots,pae_json" (any subset; empty: none). InputError for another item.
struct SkipOutputs {
  bool msa = false, plots = false, pae_json = false;
};
SkipOutputs parse_skip_output(const std::string& text);

}  // namespace cpufold
