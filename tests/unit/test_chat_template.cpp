// Chat templates: family detection from Jinja sources shaped like the public templates, exact
// rendering per family, default system prompt extraction, name overrides and the ChatML fallback.
#include "core/tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope {
namespace {

Vocab vocab_with(const std::string& bos, const std::string& eos) {
  Vocab v;
  v.tokens = {"<unk>", bos, eos, "hello"};
  v.bos = 1;
  v.eos = 2;
  return v;
}

const std::vector<ChatMessage> kConversation = {
    {"system", "You are terse."},
    {"user", "Hi there"},
    {"assistant", "Hello!"},
    {"user", "Name a colour."},
};

struct FamilyCase {
  const char* label;
  ChatTemplateFamily family;
  std::string source;  // Jinja as stored in GGUF: quoted "\n" are real newlines
  Vocab vocab;
  std::string rendered;  // kConversation with add_generation_prompt
  std::vector<std::string> stops;
};

std::vector<FamilyCase> family_cases() {
  return {
      {"chatml", ChatTemplateFamily::ChatML,
       "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + "
       "'\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}",
       vocab_with("<|endoftext|>", "<|im_end|>"),
       "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
       "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nName a colour.<|im_end|>\n"
       "<|im_start|>assistant\n",
       {"<|im_end|>"}},
      {"llama2", ChatTemplateFamily::Llama2,
       "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = "
       "messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}"
       "{% endif %}{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}"
       "{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}"
       "{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + "
       "'[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + "
       "content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
       vocab_with("<s>", "</s>"),
       "<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi there [/INST] Hello! </s><s>[INST] Name a colour. [/INST]",
       {"</s>"}},
      {"llama3", ChatTemplateFamily::Llama3,
       "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' "
       "+ message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if "
       "loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if "
       "add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}",
       vocab_with("<|begin_of_text|>", "<|end_of_text|>"),
       "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
       "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nName a colour.<|eot_id|>"
       "<|start_header_id|>assistant<|end_header_id|>\n\n",
       {"<|eot_id|>", "<|end_of_text|>"}},
      {"zephyr", ChatTemplateFamily::Zephyr,
       "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + "
       "eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token "
       "}}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n"
       "{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
       vocab_with("<s>", "</s>"),
       "<|system|>\nYou are terse.</s>\n<|user|>\nHi there</s>\n<|assistant|>\nHello!</s>\n"
       "<|user|>\nName a colour.</s>\n<|assistant|>\n",
       {"</s>"}},
      {"mistral", ChatTemplateFamily::Mistral,
       "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
       "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
       "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif "
       "message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only "
       "user and assistant roles are supported!') }}{% endif %}{% endfor %}",
       vocab_with("<s>", "</s>"),
       "<s>[INST] You are terse.\n\nHi there [/INST]Hello!</s>[INST] Name a colour. [/INST]",
       {"</s>"}},
      {"gemma", ChatTemplateFamily::Gemma,
       "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set first_user_prefix = messages[0]['content'] "
       "+ '\n\n' %}{% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = \"\" %}{% set "
       "loop_messages = messages %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == "
       "'assistant') %}{% set role = \"model\" %}{% else %}{% set role = message['role'] %}{% endif %}{{ "
       "'<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") + message['content'] | trim "
       "+ '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}",
       vocab_with("<bos>", "<eos>"),
       "<bos><start_of_turn>user\nYou are terse.\n\nHi there<end_of_turn>\n<start_of_turn>model\nHello!"
       "<end_of_turn>\n<start_of_turn>user\nName a colour.<end_of_turn>\n<start_of_turn>model\n",
       {"<end_of_turn>", "<eos>"}},
      {"phi3", ChatTemplateFamily::Phi3,
       "{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + "
       "'<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% "
       "elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}"
       "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
       vocab_with("<s>", "<|endoftext|>"),
       "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi there<|end|>\n<|assistant|>\nHello!<|end|>\n"
       "<|user|>\nName a colour.<|end|>\n<|assistant|>\n",
       {"<|end|>", "<|endoftext|>"}},
  };
}

TEST(ChatTemplate, DetectsAndRendersEveryFamily) {
  for (const FamilyCase& c : family_cases()) {
    SCOPED_TRACE(c.label);
    std::string warning = "stale";
    const ChatTemplate t = ChatTemplate::detect(c.source, c.vocab, &warning);
    EXPECT_EQ(t.family, c.family);
    EXPECT_EQ(chat_family_name(t.family), c.label);
    EXPECT_EQ(warning, "");
    EXPECT_EQ(t.default_system, "");  // none of these templates inserts one
    EXPECT_EQ(t.render(kConversation, true), c.rendered);
    EXPECT_EQ(t.stop_strings(), c.stops);
  }
}

TEST(ChatTemplate, BosInTextOnlyWhereTheTemplateWritesIt) {
  for (const FamilyCase& c : family_cases()) {
    SCOPED_TRACE(c.label);
    const ChatTemplate t = ChatTemplate::of_family(c.family, c.vocab);
    EXPECT_EQ(t.bos_in_text, t.render(kConversation, true).starts_with(c.vocab.tokens[1]));
  }
}

TEST(ChatTemplate, SmolLM2DefaultSystemPrompt) {
  const std::string source =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
      "'<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
      "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
      "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
  std::string warning;
  const ChatTemplate t = ChatTemplate::detect(source, vocab_with("<|im_start|>", "<|im_end|>"), &warning);
  EXPECT_EQ(t.family, ChatTemplateFamily::ChatML);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(t.default_system, "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  EXPECT_EQ(t.render({{"user", "What is the capital of France?"}}, true),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n");
  // An explicit system turn replaces the default.
  EXPECT_EQ(t.render({{"system", "Be brief."}, {"user", "Hi"}}, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, DefaultSystemFromTheElseBranchWithEscapedNewlines) {
  // Qwen-style: the default sits in the else of `== 'system'`, written with Jinja escapes and
  // whitespace control; the branch fills an already-open system turn.
  const std::string source =
      "{%- if messages[0]['role'] == 'system' %}\n    {{- '<|im_start|>system\\n' + messages[0]['content'] + "
      "'<|im_end|>\\n' }}\n{%- else %}\n    {{- '<|im_start|>system\\nYou are Qwen, a \\'helpful\\' "
      "assistant.<|im_end|>\\n' }}\n{%- endif %}\n{%- for message in messages %}{%- if message.role != 'system' %}"
      "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endif %}"
      "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
  const ChatTemplate t = ChatTemplate::detect(source, vocab_with("<|endoftext|>", "<|im_end|>"), nullptr);
  EXPECT_EQ(t.family, ChatTemplateFamily::ChatML);
  EXPECT_EQ(t.default_system, "You are Qwen, a 'helpful' assistant.");
}

TEST(ChatTemplate, DefaultSystemInAnotherFamilysMarkup) {
  const std::string source =
      "{{ bos_token }}{% for message in messages %}{% if loop.first and messages[0].role != \"system\" %}{{ "
      "'<|start_header_id|>system<|end_header_id|>\n\nAlways answer in French.<|eot_id|>' }}{% endif %}{{ "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + "
      "'<|eot_id|>' }}{% endfor %}";
  const ChatTemplate t = ChatTemplate::detect(source, vocab_with("<|begin_of_text|>", "<|eot_id|>"), nullptr);
  EXPECT_EQ(t.family, ChatTemplateFamily::Llama3);
  EXPECT_EQ(t.default_system, "Always answer in French.");
  EXPECT_EQ(t.render({{"user", "  Bonjour \n"}}, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nAlways answer in French.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBonjour<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, UnknownOrEmptyTemplateFallsBackToChatMLWithAWarning) {
  const Vocab vocab = vocab_with("<s>", "</s>");
  std::string warning;
  const ChatTemplate unknown = ChatTemplate::detect("{{ messages[0]['content'] }} ### Response:", vocab, &warning);
  EXPECT_EQ(unknown.family, ChatTemplateFamily::ChatML);
  EXPECT_EQ(warning, "unrecognised chat template; using chatml");
  EXPECT_EQ(unknown.render({{"user", "Hi"}}, true), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

  const ChatTemplate empty = ChatTemplate::detect("", vocab, &warning);
  EXPECT_EQ(empty.family, ChatTemplateFamily::ChatML);
  EXPECT_EQ(warning, "the model has no chat template; using chatml");
}

// Without a template, a vocabulary holding a family's turn markers picks that family (Gemma 3 files
// often have no template, but <start_of_turn> is a token).
TEST(ChatTemplate, MissingTemplateFallsBackToTheVocabularysTurnMarkers) {
  const auto vocab_of = [](std::vector<std::string> tokens) {
    Vocab v;
    v.tokens = std::move(tokens);
    for (size_t i = 0; i < v.tokens.size(); ++i) v.token_to_id[v.tokens[i]] = static_cast<TokenId>(i);
    v.bos = 1;
    v.eos = 2;
    return v;
  };
  std::string warning;
  const ChatTemplate gemma = ChatTemplate::detect("", vocab_of({"<pad>", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>"}), &warning);
  EXPECT_EQ(gemma.family, ChatTemplateFamily::Gemma);
  EXPECT_EQ(warning, "the model has no chat template; using gemma (its vocabulary has <start_of_turn>)");
  const ChatTemplate phi3 = ChatTemplate::detect("", vocab_of({"<unk>", "<s>", "</s>", "<|user|>", "<|end|>"}), &warning);
  EXPECT_EQ(phi3.family, ChatTemplateFamily::Phi3);
  const ChatTemplate zephyr = ChatTemplate::detect("", vocab_of({"<unk>", "<s>", "</s>", "<|user|>"}), &warning);
  EXPECT_EQ(zephyr.family, ChatTemplateFamily::Zephyr);
}

TEST(ChatTemplate, FamilyFromName) {
  for (const FamilyCase& c : family_cases()) EXPECT_EQ(chat_family_from_name(c.label), c.family);
  EXPECT_EQ(chat_family_from_name("Llama3"), ChatTemplateFamily::Llama3);
  EXPECT_EQ(chat_family_from_name("vicuna"), std::nullopt);
  EXPECT_EQ(chat_family_from_name(""), std::nullopt);
}

TEST(ChatTemplate, EndsWithoutAGenerationPrompt) {
  const Vocab vocab = vocab_with("<s>", "<|endoftext|>");
  const std::vector<ChatMessage> one = {{"user", "Hi"}};
  EXPECT_EQ(ChatTemplate::of_family(ChatTemplateFamily::ChatML, vocab).render(one, false),
            "<|im_start|>user\nHi<|im_end|>\n");
  // Phi-3's official template closes a finished conversation with EOS.
  EXPECT_EQ(ChatTemplate::of_family(ChatTemplateFamily::Phi3, vocab).render(one, false),
            "<|user|>\nHi<|end|>\n<|endoftext|>");
  EXPECT_EQ(ChatTemplate::of_family(ChatTemplateFamily::Gemma, vocab).render(one, false),
            "<s><start_of_turn>user\nHi<end_of_turn>\n");
}

TEST(ChatTemplate, VocabularyWithoutBosOrEosUsesTheFamilySpelling) {
  Vocab bare;
  bare.tokens = {"a", "b"};
  const ChatTemplate t = ChatTemplate::of_family(ChatTemplateFamily::Llama2, bare);
  EXPECT_EQ(t.render({{"user", "Hi"}, {"assistant", "Yo"}}, false), "<s>[INST] Hi [/INST] Yo </s>");
}

}  // namespace
}  // namespace inferscope
