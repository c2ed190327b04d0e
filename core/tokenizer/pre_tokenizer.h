// Pre-tokenizers of byte-level BPE vocabularies: split text into pieces that merges never cross.
// Each is a hand-written scanner over code points equivalent to the regex the model was trained
// with (std::regex has no \p{L} / \p{N}).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

namespace inferscope {

enum class PreTokenizer {
  Gpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  SmolLM,  // every \p{N} on its own first, then Gpt2 on the rest
  Llama3,  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
           // | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Qwen2,   // Llama3 with \p{N} (single digits) instead of \p{N}{1,3}
};

// The pre-tokenizer a tokenizer.ggml.pre value names; nullopt for one not supported.
std::optional<PreTokenizer> pre_tokenizer_from_name(std::string_view name);

// The pieces of `text`, in order; they cover it exactly. Invalid UTF-8 bytes are pieces' bytes
// like any other (each reads as one U+FFFD code point).
std::vector<std::string_view> pre_tokenize(PreTokenizer kind, std::string_view text);

}  // namespace inferscope
