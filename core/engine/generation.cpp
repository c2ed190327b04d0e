#include "core/engine/generation.h"

#include <chrono>

#include "core/engine/runtime.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"

namespace inferscope {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::ContextFull: return "context";
    case FinishReason::Cancelled: return "cancelled";
  }
  return "unknown";
}

std::string output_piece(const Tokenizer& tokenizer, TokenId previous, TokenId next) {
  std::string piece = tokenizer.token_to_piece(next);
  if (tokenizer.vocab().add_space_prefix && previous >= 0 && previous == tokenizer.vocab().bos && piece.starts_with(' ')) {
    piece.erase(0, 1);
  }
  return piece;
}

GenerationResult generate(Runtime& runtime, int32_t seq, std::span<const TokenId> prompt, int32_t max_tokens,
                          Sampler& sampler, const TextCallback& on_text) {
  using clock = std::chrono::steady_clock;
  const Tokenizer& tok = runtime.model().tokenizer();
  GenerationResult r;
  r.prompt_tokens = static_cast<int32_t>(prompt.size());
  Utf8StreamDecoder decoder;
  auto emit = [&](const std::string& piece) {
    const std::string text = decoder.push(piece);
    r.text += text;
    return text.empty() || !on_text || on_text(text);
  };

  const auto start = clock::now();
  std::span<const float> logits = runtime.append(seq, prompt);
  const auto prefill_done = clock::now();
  auto first_token_at = prefill_done;
  bool stop = max_tokens <= 0;
  while (!stop) {
    const TokenId next = sampler.sample(logits, runtime.tokens(seq));
    if (r.tokens.empty()) first_token_at = clock::now();
    if (tok.vocab().is_eog(next)) {
      r.finish = FinishReason::Stop;
      // Keep the end-of-turn token in the history when there is room, so a chat goes on after it.
      if (runtime.length(seq) < runtime.context_length()) runtime.append(seq, std::span(&next, 1));
      break;
    }
    r.tokens.push_back(next);
    const std::vector<TokenId>& held = runtime.tokens(seq);
    if (!emit(output_piece(tok, held.empty() ? -1 : held.back(), next))) {
      r.finish = FinishReason::Cancelled;
      break;
    }
    if (static_cast<int32_t>(r.tokens.size()) >= max_tokens) {
      r.finish = FinishReason::Length;
      break;
    }
    if (runtime.length(seq) >= runtime.context_length()) {
      r.finish = FinishReason::ContextFull;
      break;
    }
    logits = runtime.append(seq, std::span(&next, 1));
  }
  const std::string tail = decoder.flush();
  r.text += tail;
  if (!tail.empty() && on_text) on_text(tail);

  const auto end = clock::now();
  const double prefill_s = std::chrono::duration<double>(prefill_done - start).count();
  r.time_to_first_token_seconds = std::chrono::duration<double>(first_token_at - start).count();
  r.prefill_tokens_per_second = prefill_s > 0 ? static_cast<double>(prompt.size()) / prefill_s : 0;
  const double decode_s = std::chrono::duration<double>(end - first_token_at).count();
  if (r.tokens.size() > 1 && decode_s > 0) r.decode_tokens_per_second = static_cast<double>(r.tokens.size() - 1) / decode_s;
  return r;
}

}  // namespace inferscope
