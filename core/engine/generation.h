// Generating text for one sequence on a Runtime: feed the prompt, then sample token by token.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope {

class Runtime;
class Sampler;
class Tokenizer;

enum class FinishReason { Stop, Length, ContextFull, Cancelled };
const char* finish_reason_name(FinishReason reason);

struct GenerationResult {
  std::vector<TokenId> tokens;  // generated ids (the end-of-generation token excluded)
  std::string text;
  int32_t prompt_tokens = 0;
  FinishReason finish = FinishReason::Length;
  double time_to_first_token_seconds = 0;  // from the start of the prompt feed to the first sampled token
  double prefill_tokens_per_second = 0;
  double decode_tokens_per_second = 0;     // tokens after the first, over the time after the first
};

// The text token `next` adds after `previous`: its piece, without the word-start space that
// SentencePiece's decoder drops from the first token after BOS.
std::string output_piece(const Tokenizer& tokenizer, TokenId previous, TokenId next);

// Called with each piece of text as soon as it forms whole UTF-8 characters; return false to stop.
using TextCallback = std::function<bool(std::string_view text)>;

// Feeds `prompt` after what `seq` holds, then samples until an end-of-generation token, max_tokens,
// or the context length. A finished generation leaves its tokens in the sequence (chat history),
// except the end-of-generation token, which is fed too so the next turn continues after it.
GenerationResult generate(Runtime& runtime, int32_t seq, std::span<const TokenId> prompt, int32_t max_tokens,
                          Sampler& sampler, const TextCallback& on_text);

}  // namespace inferscope
