// Chat templates: family detection by markers, default-system extraction from the Jinja source,
// and rendering that reproduces each family's official template (no Jinja interpreter).
#include "core/tokenizer/chat_template.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "core/tokenizer/vocab.h"

namespace inferscope {

namespace {

struct FamilyInfo {
  ChatTemplateFamily family;
  std::string_view name;
  bool bos_in_text;                                // the official template starts with bos_token
  std::string_view default_bos, default_eos;       // used when the vocabulary has no such token
  std::string_view end_of_turn;                    // the text that closes an assistant turn ("" = EOS)
  std::string_view system_open, system_close;      // a system turn's markup (open "" = no system role,
                                                   // close "" = the EOS text)
};

constexpr std::array<FamilyInfo, 7> kFamilies{{
    {ChatTemplateFamily::ChatML, "chatml", false, "", "<|im_end|>", "<|im_end|>", "<|im_start|>system\n",
     "<|im_end|>"},
    {ChatTemplateFamily::Llama2, "llama2", true, "<s>", "</s>", "", "<<SYS>>\n", "\n<</SYS>>"},
    {ChatTemplateFamily::Llama3, "llama3", true, "<|begin_of_text|>", "<|eot_id|>", "<|eot_id|>",
     "<|start_header_id|>system<|end_header_id|>\n\n", "<|eot_id|>"},
    {ChatTemplateFamily::Zephyr, "zephyr", false, "<s>", "</s>", "", "<|system|>\n", ""},
    {ChatTemplateFamily::Mistral, "mistral", true, "<s>", "</s>", "", "", ""},
    {ChatTemplateFamily::Gemma, "gemma", true, "<bos>", "<eos>", "<end_of_turn>", "", ""},
    {ChatTemplateFamily::Phi3, "phi3", false, "<s>", "<|endoftext|>", "<|end|>", "<|system|>\n", "<|end|>"},
}};

const FamilyInfo& info(ChatTemplateFamily family) {
  return *std::find_if(kFamilies.begin(), kFamilies.end(), [&](const FamilyInfo& f) { return f.family == family; });
}

// Jinja's `trim` / Python's str.strip() on ASCII whitespace.
std::string trim(std::string_view s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

std::optional<ChatTemplateFamily> family_by_markers(std::string_view src) {
  if (contains(src, "<|im_start|>")) return ChatTemplateFamily::ChatML;
  if (contains(src, "<|start_header_id|>")) return ChatTemplateFamily::Llama3;
  if (contains(src, "<start_of_turn>")) return ChatTemplateFamily::Gemma;
  if (contains(src, "<|user|>"))
    return contains(src, "<|end|>") ? ChatTemplateFamily::Phi3 : ChatTemplateFamily::Zephyr;
  if (contains(src, "[INST]"))
    return contains(src, "<<SYS>>") ? ChatTemplateFamily::Llama2 : ChatTemplateFamily::Mistral;
  return std::nullopt;
}

// Without a usable template: the family whose turn markers are tokens of the vocabulary (Gemma 3
// files often carry no template, but their vocabulary has <start_of_turn>); nullopt when none is.
std::optional<std::pair<ChatTemplateFamily, std::string_view>> family_by_vocabulary(const Vocab& vocab) {
  const auto has = [&](std::string_view token) { return vocab.token_to_id.count(std::string(token)) > 0; };
  for (std::string_view marker : {"<|im_start|>", "<|start_header_id|>", "<start_of_turn>", "<|user|>"}) {
    if (!has(marker)) continue;
    const std::string markers = std::string(marker) + (has("<|end|>") ? "<|end|>" : "");
    return std::pair{*family_by_markers(markers), marker};
  }
  return std::nullopt;
}

std::string token_text(const Vocab& vocab, TokenId id, std::string_view fallback) {
  if (id >= 0 && id < vocab.size() && !vocab.tokens[static_cast<size_t>(id)].empty())
    return vocab.tokens[static_cast<size_t>(id)];
  return std::string(fallback);
}

// ---- Reading just enough Jinja to find the default system prompt ----

struct Tag {
  size_t begin = std::string_view::npos, end = 0;  // "{%" .. past "%}"
  std::string keyword;                             // "if", "else", "endif", ...
};

// The next `{% ... %}` tag at or after `pos` (begin == npos when none).
Tag next_tag(std::string_view src, size_t pos) {
  Tag tag;
  const size_t open = src.find("{%", pos);
  if (open == std::string_view::npos) return tag;
  const size_t close = src.find("%}", open + 2);
  if (close == std::string_view::npos) return tag;
  tag.begin = open;
  tag.end = close + 2;
  size_t k = open + 2;
  while (k < close && (src[k] == '-' || src[k] == '+' || std::isspace(static_cast<unsigned char>(src[k])))) ++k;
  while (k < close && std::isalpha(static_cast<unsigned char>(src[k]))) tag.keyword += src[k++];
  return tag;
}

// From `pos` (just after an if/elif/else tag), the tag that ends this branch at the same depth.
Tag branch_end(std::string_view src, size_t pos) {
  int depth = 0;
  for (Tag tag = next_tag(src, pos); tag.begin != std::string_view::npos; tag = next_tag(src, tag.end)) {
    if (tag.keyword == "if" || tag.keyword == "for") ++depth;
    else if (tag.keyword == "endif" || tag.keyword == "endfor") {
      if (depth-- == 0) return tag;
    } else if (depth == 0 && (tag.keyword == "else" || tag.keyword == "elif")) return tag;
  }
  return {};
}

// Decodes a Jinja string literal starting at src[pos] (a quote); advances pos past it.
std::string read_literal(std::string_view src, size_t& pos) {
  const char quote = src[pos++];
  std::string out;
  while (pos < src.size() && src[pos] != quote) {
    char c = src[pos++];
    if (c == '\\' && pos < src.size()) {
      c = src[pos++];
      c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;  // \\ \' \" stand for themselves
    }
    out += c;
  }
  ++pos;  // the closing quote
  return out;
}

// The text a `{{ ... }}` expression emits when it concatenates literals and bos/eos tokens;
// literals used as subscripts or call arguments (message['role'], f('x')) are skipped.
std::string literal_output(std::string_view expr, std::string_view bos, std::string_view eos) {
  std::string out;
  char previous = '+';  // the last significant character; the expression starts like after a '+'
  for (size_t i = 0; i < expr.size();) {
    const char c = expr[i];
    if (c == '\'' || c == '"') {
      const std::string text = read_literal(expr, i);
      if (previous == '+' || previous == '~') out += text;
      previous = c;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = i;
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_')) ++i;
      const std::string_view word = expr.substr(start, i - start);
      if (word == "bos_token") out += bos;
      if (word == "eos_token") out += eos;
      previous = 'a';
    } else {
      if (!std::isspace(static_cast<unsigned char>(c))) previous = c;
      ++i;
    }
  }
  return out;
}

// Everything the `{{ }}` expressions in src[begin, end) emit literally.
std::string branch_output(std::string_view src, size_t begin, size_t end, std::string_view bos, std::string_view eos) {
  std::string out;
  for (size_t open = src.find("{{", begin); open < end; open = src.find("{{", open + 2)) {
    const size_t close = src.find("}}", open + 2);
    if (close == std::string_view::npos || close > end) break;
    std::string_view expr = src.substr(open + 2, close - open - 2);
    if (!expr.empty() && expr.front() == '-') expr.remove_prefix(1);  // whitespace control {{- ... -}}
    if (!expr.empty() && expr.back() == '-') expr.remove_suffix(1);
    out += literal_output(expr, bos, eos);
  }
  return out;
}

// The system text inside one branch's output: between the family's system-turn markers when the
// branch spells a whole turn, else the branch's text itself (it fills in an already-open turn).
std::string system_text_in(std::string_view emitted, const FamilyInfo& family, std::string_view eos) {
  if (!family.system_open.empty()) {
    const size_t open = emitted.find(family.system_open);
    if (open != std::string_view::npos) {
      const size_t from = open + family.system_open.size();
      const std::string_view close = family.system_close.empty() ? eos : family.system_close;
      return trim(emitted.substr(from, emitted.find(close, from) - from));
    }
  }
  return trim(emitted);
}

// Matches `messages[0]['role'] != 'system'` (or `.role`, `==`, either quote) at src[pos]; returns
// the operator ("!=" or "==") and sets `end` past the match, or "" when it does not match.
std::string_view first_role_test(std::string_view src, size_t pos, size_t& end) {
  const auto skip_space = [&](size_t i) {
    while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i]))) ++i;
    return i;
  };
  const auto eat = [&](size_t& i, std::string_view word) {
    if (src.substr(i, word.size()) != word) return false;
    i += word.size();
    return true;
  };
  const auto eat_quoted = [&](size_t& i, std::string_view word) {  // 'word' or "word"
    if (i >= src.size() || (src[i] != '\'' && src[i] != '"')) return false;
    const size_t close = i + 1 + word.size();
    if (src.substr(i + 1, word.size()) != word || close >= src.size() || src[close] != src[i]) return false;
    i = close + 1;
    return true;
  };
  size_t i = pos;
  if (!eat(i, "messages[0]")) return "";
  if (!eat(i, ".role") && !(eat(i, "[") && eat_quoted(i, "role") && eat(i, "]"))) return "";
  i = skip_space(i);
  const std::string_view op = src.substr(i, 2);
  if (op != "!=" && op != "==") return "";
  i = skip_space(i + 2);
  if (!eat_quoted(i, "system")) return "";
  end = i;
  return op;
}

// The system prompt the template emits when the conversation has none: the branch taken when
// messages[0] is not a system turn (`!= 'system'`, or the else of `== 'system'`).
std::string extract_default_system(std::string_view src, const FamilyInfo& family, std::string_view bos,
                                   std::string_view eos) {
  for (size_t at = src.find("messages[0]"); at != std::string_view::npos; at = src.find("messages[0]", at + 1)) {
    size_t match_end = 0;
    const std::string_view op = first_role_test(src, at, match_end);
    if (op.empty()) continue;
    const size_t tag_open = src.rfind("{%", at);
    if (tag_open == std::string_view::npos) continue;
    const Tag cond = next_tag(src, tag_open);
    if (cond.end < match_end || (cond.keyword != "if" && cond.keyword != "elif")) continue;  // not an if test
    size_t begin = cond.end;
    Tag end = branch_end(src, begin);
    if (op == "==") {  // the default lives in the else branch
      if (end.keyword != "else") continue;
      begin = end.end;
      end = branch_end(src, begin);
    }
    if (end.begin == std::string_view::npos) continue;
    std::string text = system_text_in(branch_output(src, begin, end.begin, bos, eos), family, eos);
    if (!text.empty()) return text;
  }
  return "";
}

// ---- Rendering, one function per family, each following its official template ----

// Conversations without a system turn get the template's default one.
std::vector<ChatMessage> with_default_system(const std::vector<ChatMessage>& messages, const std::string& system) {
  std::vector<ChatMessage> out;
  if (!system.empty() && !messages.empty() && messages.front().role != "system") out.push_back({"system", system});
  out.insert(out.end(), messages.begin(), messages.end());
  return out;
}

// Splits off a leading system turn for families that fold it into the first user turn.
std::pair<std::string, std::span<const ChatMessage>> split_system(const std::vector<ChatMessage>& messages) {
  if (!messages.empty() && messages.front().role == "system")
    return {messages.front().content, std::span<const ChatMessage>(messages).subspan(1)};
  return {"", std::span<const ChatMessage>(messages)};
}

std::string render_chatml(const std::vector<ChatMessage>& messages, bool gen) {
  std::string out;
  for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (gen) out += "<|im_start|>assistant\n";
  return out;
}

// [INST] turns; the system block opens the first turn's content; contents are stripped.
std::string render_llama2(const ChatTemplate& t, const std::vector<ChatMessage>& messages) {
  auto [system, turns] = split_system(messages);
  std::string out;
  for (size_t i = 0; i < turns.size(); ++i) {
    std::string content = turns[i].content;
    if (i == 0 && !system.empty()) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
    if (turns[i].role == "assistant") out.append(" ").append(trim(content)).append(" ").append(t.eos_text);
    else out += t.bos_text + "[INST] " + trim(content) + " [/INST]";
  }
  return out;
}

std::string render_llama3(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool gen) {
  std::string out = t.bos_text;
  for (const auto& m : messages)
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
  if (gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// <|role|> headers; each turn closes with EOS and a newline.
std::string render_zephyr(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool gen) {
  std::string out;
  for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + t.eos_text + "\n";
  if (gen) out += "<|assistant|>\n";
  return out;
}

// No system role: the system text opens the first user message.
std::string render_mistral(const ChatTemplate& t, const std::vector<ChatMessage>& messages) {
  auto [system, turns] = split_system(messages);
  std::string out = t.bos_text;
  bool first_user = true;
  for (const auto& m : turns) {
    if (m.role == "assistant") {
      out += m.content + t.eos_text;
      continue;
    }
    const std::string prefix = first_user && !system.empty() ? system + "\n\n" : "";
    out += "[INST] " + prefix + m.content + " [/INST]";
    first_user = false;
  }
  return out;
}

// The assistant is "model"; the system text opens the first turn (Gemma 3's rule).
std::string render_gemma(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool gen) {
  auto [system, turns] = split_system(messages);
  std::string out = t.bos_text;
  for (size_t i = 0; i < turns.size(); ++i) {
    const std::string role = turns[i].role == "assistant" ? "model" : turns[i].role;
    const std::string prefix = i == 0 && !system.empty() ? system + "\n\n" : "";
    out += "<start_of_turn>" + role + "\n" + prefix + trim(turns[i].content) + "<end_of_turn>\n";
  }
  if (gen) out += "<start_of_turn>model\n";
  return out;
}

// Without a generation prompt the official template closes the conversation with EOS.
std::string render_phi3(const ChatTemplate& t, const std::vector<ChatMessage>& messages, bool gen) {
  std::string out;
  for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
  out += gen ? "<|assistant|>\n" : t.eos_text;
  return out;
}

}  // namespace

std::string_view chat_family_name(ChatTemplateFamily family) { return info(family).name; }

std::optional<ChatTemplateFamily> chat_family_from_name(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& f : kFamilies)
    if (f.name == lower) return f.family;
  return std::nullopt;
}

ChatTemplate ChatTemplate::of_family(ChatTemplateFamily family, const Vocab& vocab) {
  const FamilyInfo& f = info(family);
  ChatTemplate t;
  t.family = family;
  t.bos_in_text = f.bos_in_text;
  t.bos_text = token_text(vocab, vocab.bos, f.default_bos);
  t.eos_text = token_text(vocab, vocab.eos, f.default_eos);
  return t;
}

ChatTemplate ChatTemplate::detect(std::string_view jinja_source, const Vocab& vocab, std::string* warning,
                                  std::string* evidence) {
  if (warning) warning->clear();
  if (evidence) evidence->clear();
  const auto family = family_by_markers(jinja_source);
  if (!family) {
    const auto by_vocabulary = family_by_vocabulary(vocab);
    const ChatTemplateFamily chosen = by_vocabulary ? by_vocabulary->first : ChatTemplateFamily::ChatML;
    if (warning) {
      *warning = std::string(jinja_source.empty() ? "the model has no chat template" : "unrecognised chat template") +
                 "; using " + std::string(info(chosen).name) +
                 (by_vocabulary ? " (its vocabulary has " + std::string(by_vocabulary->second) + ")" : std::string());
    }
    if (evidence && by_vocabulary) *evidence = by_vocabulary->second;
    return of_family(chosen, vocab);
  }
  ChatTemplate t = of_family(*family, vocab);
  t.default_system = extract_default_system(jinja_source, info(*family), t.bos_text, t.eos_text);
  return t;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  const std::vector<ChatMessage> turns = with_default_system(messages, default_system);
  // Llama 2 and Mistral prompts already end where the assistant begins ("[/INST]").
  switch (family) {
    case ChatTemplateFamily::ChatML: return render_chatml(turns, add_generation_prompt);
    case ChatTemplateFamily::Llama2: return render_llama2(*this, turns);
    case ChatTemplateFamily::Llama3: return render_llama3(*this, turns, add_generation_prompt);
    case ChatTemplateFamily::Zephyr: return render_zephyr(*this, turns, add_generation_prompt);
    case ChatTemplateFamily::Mistral: return render_mistral(*this, turns);
    case ChatTemplateFamily::Gemma: return render_gemma(*this, turns, add_generation_prompt);
    case ChatTemplateFamily::Phi3: return render_phi3(*this, turns, add_generation_prompt);
  }
  return {};
}

// The family's end-of-turn marker and the model's EOS text.
std::vector<std::string> ChatTemplate::stop_strings() const {
  std::vector<std::string> stops;
  const std::string_view end_of_turn = info(family).end_of_turn;
  if (!end_of_turn.empty()) stops.emplace_back(end_of_turn);
  if (!eos_text.empty() && std::find(stops.begin(), stops.end(), eos_text) == stops.end()) stops.push_back(eos_text);
  return stops;
}

}  // namespace inferscope
