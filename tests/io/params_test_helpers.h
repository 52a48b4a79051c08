// Helpers for the parameter-file tests: build .npy bytes and .npz archives at test time, read
// the reference `.keys.txt` listings, and capture the message of an expected error.
#pragma once

#include <gtest/gtest.h>
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "memory/error.h"
#include "memory/tensor.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {

// The tiny reference parameter files committed under tests/data/params.
inline std::filesystem::path tiny_params(const std::string& preset) {
  return test_data_dir() / "params" / ("params_" + preset + ".npz");
}

// A .npy file from a literal header dict: magic, version, the dict padded to a multiple of
// 64 bytes, then `data`.
inline std::string npy_from_dict(std::string dict, const std::string& data, int version = 1) {
  const std::size_t preamble = version == 1 ? 10 : 12;
  while ((preamble + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const std::size_t len = dict.size();
  for (std::size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) {
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  }
  return out + dict + data;
}

inline std::string npy_bytes(const std::string& descr, const std::string& shape_tuple,
                             const std::string& data, bool fortran_order = false, int version = 1) {
  return npy_from_dict("{'descr': '" + descr + "', 'fortran_order': " +
                           (fortran_order ? "True" : "False") + ", 'shape': " + shape_tuple + ", }",
                       data, version);
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

struct ZipEntryBytes {
  std::string name;
  std::string bytes;
};

// Writes a zip archive with libzip, every entry stored or every entry deflated.
inline void write_zip(const std::filesystem::path& path, const std::vector<ZipEntryBytes>& entries,
                      bool deflate) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(z, nullptr) << "zip_open " << path << " failed: " << error;
  for (const ZipEntryBytes& e : entries) {
    zip_source_t* src = zip_source_buffer(z, e.bytes.data(), e.bytes.size(), 0);
    ASSERT_NE(src, nullptr);
    const zip_int64_t index = zip_file_add(z, e.name.c_str(), src, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(index, 0) << zip_strerror(z);
    ASSERT_EQ(zip_set_file_compression(z, static_cast<zip_uint64_t>(index),
                                       deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 9),
              0);
  }
  ASSERT_EQ(zip_close(z), 0) << zip_strerror(z);
}

// Every entry of a zip archive, as stored names and uncompressed bytes.
inline std::vector<ZipEntryBytes> read_zip(const std::filesystem::path& path) {
  std::vector<ZipEntryBytes> out;
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &error);
  EXPECT_NE(z, nullptr) << "zip_open " << path << " failed: " << error;
  if (z == nullptr) return out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st);
    ZipEntryBytes e{st.name, std::string(st.size, '\0')};
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    EXPECT_EQ(zip_fread(f, e.bytes.data(), st.size), static_cast<zip_int64_t>(st.size));
    zip_fclose(f);
    out.push_back(std::move(e));
  }
  zip_discard(z);
  return out;
}

// Copies the AF2 .npz `from` to `to` with the float32 array in entry number `entry` (archive
// order) changed: element i set to v for each {i, v} of `values`. Returns that array's key.
inline std::string write_npz_with_values(const std::filesystem::path& from,
                                         const std::filesystem::path& to, std::size_t entry,
                                         const std::vector<std::pair<std::size_t, float>>& values) {
  std::vector<ZipEntryBytes> entries = read_zip(from);
  EXPECT_LT(entry, entries.size());
  std::string& npy = entries.at(entry).bytes;
  EXPECT_EQ(npy.compare(0, 6, "\x93NUMPY"), 0);
  EXPECT_EQ(npy[6], 1) << "a version 1 .npy";
  EXPECT_NE(npy.find("'<f4'"), std::string::npos) << "a float32 .npy";
  const std::size_t header = 10 + static_cast<unsigned char>(npy[8]) +
                             256 * static_cast<std::size_t>(static_cast<unsigned char>(npy[9]));
  for (const auto& [index, value] : values) {
    EXPECT_LE(header + 4 * (index + 1), npy.size());
    std::memcpy(npy.data() + header + 4 * index, &value, 4);
  }
  write_zip(to, entries, /*deflate=*/true);
  const std::string& name = entries[entry].name;
  return name.substr(0, name.size() - 4);  // drop ".npy"
}

// The archive position of `key`'s entry in an .npz (fails the test when absent).
inline std::size_t npz_entry_index(const std::filesystem::path& npz, const std::string& key) {
  const std::vector<ZipEntryBytes> entries = read_zip(npz);
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == key + ".npy") return i;
  ADD_FAILURE() << key << " is not in " << npz;
  return entries.size();
}

// write_npz_with_values with a NaN at `nan_at` and +Inf at `inf_at`.
inline std::string write_poisoned_npz(const std::filesystem::path& from,
                                      const std::filesystem::path& to, std::size_t entry,
                                      std::size_t nan_at, std::size_t inf_at) {
  return write_npz_with_values(from, to, entry,
                               {{nan_at, std::numeric_limits<float>::quiet_NaN()},
                                {inf_at, std::numeric_limits<float>::infinity()}});
}

// One line of a reference `.keys.txt`: "key<TAB>[d0, d1]<TAB>float32".
struct KeyShape {
  std::string key;
  Shape shape;
  std::string dtype;
};

inline std::vector<KeyShape> read_keys_txt(const std::filesystem::path& path) {
  std::vector<KeyShape> out;
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto tab1 = line.find('\t'), tab2 = line.rfind('\t');
    KeyShape ks{line.substr(0, tab1), Shape(), line.substr(tab2 + 1)};
    std::string dims = line.substr(tab1 + 1, tab2 - tab1 - 1);
    for (char& c : dims)
      if (c == '[' || c == ']' || c == ',') c = ' ';
    std::istringstream s(dims);
    std::int64_t d;
    while (s >> d) ks.shape.push_back(d);
    out.push_back(std::move(ks));
  }
  return out;
}

// Passes when `text` contains `part`; on failure shows both.
inline ::testing::AssertionResult has(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the `Error` that `f` must throw; records a failure when it throws nothing.
template <typename Error = WeightsError, typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return {};
}

}  // namespace cpufold::testing
