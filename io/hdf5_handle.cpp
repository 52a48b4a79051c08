#include "io/hdf5_handle.h"

#include <vector>

namespace cpufold {

std::string h5_error_text() {
  std::vector<std::string> messages;
  auto collect = [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
    if (e->desc != nullptr && *e->desc != '\0') {
      static_cast<std::vector<std::string>*>(data)->emplace_back(e->desc);
    }
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &messages);
  if (messages.empty()) return "unknown HDF5 error";
  // The outermost message says what failed, the innermost why.
  if (messages.size() == 1 || messages.front() == messages.back()) return messages.front();
  return messages.front() + " (" + messages.back() + ")";
}

}  // namespace cpufold
