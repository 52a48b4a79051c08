// Text that came from users (file contents, headers, names, paths) made safe before it is
// written to JSON, log.txt, a terminal or a file name: always valid UTF-8, no control
// characters, and cut only between characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cpufold::text {

// `bytes` as valid UTF-8 a user can read: a byte that is not part of a well-formed UTF-8
// sequence (stray continuation bytes, overlong forms, surrogates, code points past U+10FFFF,
// a sequence cut short) becomes "\xNN"; tab, CR and LF become "\t", "\r", "\n"; other
// C0 controls and DEL become "\xNN"; C1 controls (U+0080-U+009F, which terminals may act
// on) become "\u0080"-style escapes. Everything else is kept as written.
std::string safe_text(std::string_view bytes);

// True when `bytes` is well-formed UTF-8 (the same rules as `safe_text`, controls allowed).
bool is_valid_utf8(std::string_view bytes);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence (a malformed sequence counts as single bytes).
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

// `s` cut to about `max_bytes` (on a character boundary) with "..." when it was longer:
// for quoting a name or a line in a message without copying a megabyte of it.
std::string excerpt(std::string_view s, std::size_t max_bytes = 80);

// 64-bit FNV-1a of `bytes`: a stable, platform-independent fingerprint for names.
std::uint64_t fnv1a64(std::string_view bytes);

}  // namespace cpufold::text
