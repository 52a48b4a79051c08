// Memory sizes as users write them ("1.5G", "800M", "2GiB") and as cpufold prints them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cpufold {

// Bytes of "<number>[K|M|G|T][i][B]" (binary multiples, as Slurm's --mem and numfmt --from=iec;
// no suffix: bytes). Throws InputError naming `what` and the text when it is not a size.
std::size_t parse_byte_size(std::string_view text, std::string_view what);

// "1.52 GiB", "812 MiB", "4.0 KiB": three significant figures in the largest unit below it.
std::string format_bytes(std::size_t bytes);

// Slurm's spelling for --mem: whole MiB rounded up, "1557M".
std::string slurm_mem(std::size_t bytes);

}  // namespace cpufold
