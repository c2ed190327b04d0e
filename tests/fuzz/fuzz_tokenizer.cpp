// libFuzzer target for a tokenizer (core/tokenizer/tokenizer.h) on any bytes, invalid UTF-8 included:
// encoding gives ids inside the vocabulary; the pieces streamed through Utf8StreamDecoder come out as
// valid UTF-8; and decoding gives the text back when the vocabulary has a token for each of its bytes
// (a byte-level character, or SentencePiece's <0xNN>) and, for SentencePiece, the text does not
// spell the space marker U+2581 itself (it decodes as a space). The build makes one target per
// tokenizer family, each with the vocabulary file INFERSCOPE_FUZZ_VOCAB names.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/bpe_tokenizer.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/unicode.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace inferscope;

std::unique_ptr<Tokenizer> tokenizer;
std::array<bool, 256> byte_has_token{};  // the vocabulary spells this byte with a token of its own

bool valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const Utf8Char c = utf8_decode(s, pos);
    if (c.cp == kReplacementChar && c.len == 1) return false;
    pos += c.len;
  }
  return true;
}

// Whether decode(encode(text)) must give `text` back.
bool round_trips(std::string_view text) {
  for (const char c : text) {
    if (!byte_has_token[static_cast<uint8_t>(c)]) return false;
  }
  return tokenizer->vocab().model != "llama" || text.find("\xE2\x96\x81") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  try {
    tokenizer = Tokenizer::from_gguf(*GgufFile::open(INFERSCOPE_FUZZ_VOCAB));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot load the fuzz vocabulary: %s\n", e.what());
    std::exit(1);
  }
  const Vocab& v = tokenizer->vocab();
  for (int b = 0; b < 256; ++b) {
    std::string spelling;
    if (v.model == "gpt2") {
      utf8_append(spelling, gpt2_byte_to_code_point(static_cast<uint8_t>(b)));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      spelling = hex;
    }
    byte_has_token[b] = v.token_to_id.count(spelling) > 0;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  const std::vector<TokenId> with_specials = tokenizer->encode(text, true, true);
  for (const TokenId id : with_specials) {
    if (id < 0 || id >= tokenizer->vocab().size()) __builtin_trap();
  }
  Utf8StreamDecoder stream;
  std::string streamed;
  for (const TokenId id : with_specials) streamed += stream.push(tokenizer->token_to_piece(id, true));
  streamed += stream.flush();
  if (!valid_utf8(streamed)) __builtin_trap();

  if (round_trips(text) && tokenizer->decode(tokenizer->encode(text, false, false)) != text) __builtin_trap();
  return 0;
}
