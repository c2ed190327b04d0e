// Quoting untrusted server text in error messages: at most a given length, cut on a UTF-8 boundary.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace inferscope {

// `text` when it is at most `max_bytes` long, else its first `max_bytes` (less any partial UTF-8
// character at the cut) followed by "... (N bytes)".
std::string text_excerpt(std::string_view text, size_t max_bytes = 120);

}  // namespace inferscope
