// Chat templates: recognise the family of a GGUF tokenizer.chat_template and render turns with it.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

struct Vocab;

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

enum class ChatTemplateFamily { ChatML, Llama2, Llama3, Zephyr, Mistral, Gemma, Phi3 };

std::string_view chat_family_name(ChatTemplateFamily family);
std::optional<ChatTemplateFamily> chat_family_from_name(std::string_view name);

struct ChatTemplate {
  ChatTemplateFamily family = ChatTemplateFamily::ChatML;
  std::string default_system;  // inserted when the conversation has no system turn ("" = none)
  bool bos_in_text = false;    // the rendered text starts with the BOS token's text itself
  std::string bos_text, eos_text;  // the vocabulary's BOS/EOS spellings, used by some families

  // Detects the family from the Jinja source (empty source, or unknown: the family whose turn markers
  // the vocabulary holds, else ChatML, with `warning` set and `evidence` the marker found, "" for none).
  static ChatTemplate detect(std::string_view jinja_source, const Vocab& vocab, std::string* warning,
                             std::string* evidence = nullptr);
  static ChatTemplate of_family(ChatTemplateFamily family, const Vocab& vocab);

  // The prompt text for these turns; with add_generation_prompt, ends where the assistant begins.
  std::string render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  // Strings that end an assistant turn in this family (e.g. "<|im_end|>").
  std::vector<std::string> stop_strings() const;
};

}  // namespace inferscope
