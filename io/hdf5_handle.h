// RAII for HDF5 identifiers, and a scope that stops HDF5 printing its error stack to stderr
// (we turn failures into exceptions with a message instead).
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>

namespace cpufold {

class H5Id {
 public:
  using Closer = herr_t (*)(hid_t);

  H5Id() = default;
  H5Id(hid_t id, Closer close) : id_(id), close_(close) {}
  H5Id(H5Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  H5Id& operator=(H5Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      close_ = o.close_;
    }
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and returns HDF5's status: closing a file flushes it, so writers must check.
  herr_t close() {
    const herr_t status = valid() ? close_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }
  void reset() { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

// While alive, HDF5 errors are not printed; the previous handler is restored afterwards.
class H5QuietErrors {
 public:
  H5QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~H5QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  H5QuietErrors(const H5QuietErrors&) = delete;
  H5QuietErrors& operator=(const H5QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The current HDF5 error stack as one line ("unable to open file (file signature not found)").
// Call it right after the failing call: the next HDF5 API call clears the stack.
std::string h5_error_text();

}  // namespace cpufold
