// libFuzzer target for the chat templates (core/tokenizer/chat_template.h). The input's NUL-separated
// fields: a GGUF tokenizer.chat_template (Jinja source), the vocabulary's BOS and EOS spellings and
// one more of its tokens (a turn marker, say), then role and content of each turn. The template is
// detected and renders the turns, as every family does; none of it throws.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tokenizer/chat_template.h"
#include "core/tokenizer/vocab.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace inferscope;

// A vocabulary of the given spellings, the first two its BOS and EOS.
Vocab vocabulary(const std::vector<std::string_view>& tokens) {
  Vocab v;
  for (const std::string_view t : tokens) {
    v.token_to_id.emplace(std::string(t), v.size());
    v.tokens.emplace_back(t);
  }
  v.bos = 0;
  v.eos = 1;
  return v;
}

void render(const ChatTemplate& t, const std::vector<ChatMessage>& turns) {
  (void)t.render(turns, true);
  (void)t.render(turns, false);
  (void)t.stop_strings();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string_view> f = fuzz::fields(fuzz::text_of(data, size));
  f.resize(std::max<size_t>(f.size(), 4));
  const Vocab vocab = vocabulary({f[1], f[2], f[3]});
  std::vector<ChatMessage> turns;
  for (size_t i = 4; i + 1 < f.size(); i += 2) turns.push_back({std::string(f[i]), std::string(f[i + 1])});
  std::string warning;
  render(ChatTemplate::detect(f[0], vocab, &warning), turns);
  (void)chat_family_from_name(f[0]);
  for (int family = 0; family <= static_cast<int>(ChatTemplateFamily::Phi3); ++family) {
    render(ChatTemplate::of_family(static_cast<ChatTemplateFamily>(family), vocab), turns);
  }
  return 0;
}
