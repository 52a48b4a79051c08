// `cpufold convert-params`: an AF2 `.npz` to a cpufold HDF5 weights file (see
// io/hdf5_weights.h for the layout), written so that loading it is a single read-only mmap.
#pragma once

#include <filesystem>
#include <string>

namespace cpufold {

// Reads every array of `npz` and writes `out_h5` with one contiguous dataset per key and the
// root attributes cpufold_format, source_file (npz's file name) and `preset` (the caller's
// preset name). The file is written beside `out_h5` as OUT.h5.tmp-<pid>, read back and compared
// bit for bit, then renamed over `out_h5`, so readers never see a partial file.
// Throws WeightsError for a bad input file, InputError when the output cannot be written.
void convert_params(const std::filesystem::path& npz, const std::filesystem::path& out_h5,
                    const std::string& preset);

}  // namespace cpufold
