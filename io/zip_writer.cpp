#include "io/zip_writer.h"

#include <unistd.h>
#include <zip.h>

#include <string>

#include "memory/error.h"

namespace cpufold {

void write_zip_atomically(const std::filesystem::path& path,
                          std::span<const std::filesystem::path> files) {
  // atomic_file's temporary naming, so remove_stale_temporaries cleans up after a kill.
  std::string tmp_name = ".";
  tmp_name += path.filename().string();
  tmp_name += ".tmp.";
  tmp_name += std::to_string(::getpid());
  const std::filesystem::path tmp = path.parent_path() / tmp_name;
  const auto fail = [&](const std::string& why) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return InputError(path.string() + ": cannot write the zip archive: " + why);
  };
  int error = 0;
  zip_t* zip = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    const std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw fail(why);
  }
  for (const std::filesystem::path& file : files) {
    zip_source_t* source = zip_source_file(zip, file.c_str(), 0, -1);
    if (source == nullptr || zip_file_add(zip, file.filename().c_str(), source,
                                          ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) < 0) {
      if (source != nullptr) zip_source_free(source);
      const std::string why = file.string() + ": " + zip_strerror(zip);
      zip_discard(zip);
      throw fail(why);
    }
  }
  // zip_close writes the archive (reading the sources now) and frees `zip` on success.
  if (zip_close(zip) != 0) {
    const std::string why = zip_strerror(zip);
    zip_discard(zip);
    throw fail(why);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw fail(ec.message());
}

}  // namespace cpufold
