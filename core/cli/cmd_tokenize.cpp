// inferscope-cli tokenize: the ids and pieces a text becomes (vocabulary-only GGUF files work too).
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/cli/args.h"
#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope::cli {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(const std::string& s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  }
  return n;
}

// A piece as text, every byte that is not part of a valid UTF-8 character written <0xNN>.
std::string escape_invalid_utf8(const std::string& piece) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < piece.size();) {
    const size_t n = utf8_sequence_length(piece, i);
    if (n > 0) {
      out.append(piece, i, n);
      i += n;
    } else {
      const auto b = static_cast<unsigned char>(piece[i++]);
      out += std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
    }
  }
  return out;
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", true, "GGUF file with a tokenizer (tensors optional)"},
      {"--text", "", true, "text to tokenize"},
      {"--no-bos", "", false, "do not add BOS"},
      {"--json", "", false, "print {\"ids\": [...], \"pieces\": [...]}"},
  };
  if (print_help_if_asked("tokenize --model PATH --text TEXT [--no-bos] [--json]", specs, argc, argv)) return 0;
  const Args args(specs, argc, argv, 2);
  const std::string text = args.required("--text");
  auto file = GgufFile::open(args.required("--model"));
  auto tokenizer = Tokenizer::from_gguf(*file);
  const std::vector<TokenId> ids = tokenizer->encode(text, !args.has("--no-bos"), true);
  std::vector<std::string> pieces;
  for (TokenId id : ids) pieces.push_back(escape_invalid_utf8(tokenizer->token_to_piece(id, true)));
  if (args.has("--json")) {
    std::cout << nlohmann::json{{"ids", ids}, {"pieces", pieces}}.dump() << "\n";
    return 0;
  }
  for (size_t i = 0; i < ids.size(); ++i) std::cout << ids[i] << " -> '" << pieces[i] << "'\n";
  std::cout << ids.size() << " tokens\n";
  return 0;
}

}  // namespace inferscope::cli
