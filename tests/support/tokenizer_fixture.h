// Reading tests/fixtures/tokenizer/*.tsv: expected token ids that llama.cpp's llama-tokenize gave
// (see make_fixtures.sh there). Lines: C-escaped input, TAB, ids separated by spaces; '#' comments.
#pragma once
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::test {

struct TokenizerCase {
  std::string text;
  std::vector<int32_t> ids;
};

// Undoes the escapes make_fixtures.sh feeds to printf %b: \n \t \r \\ and \xHH.
inline std::string unescape_case(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    if (c == 'n') out += '\n';
    else if (c == 't') out += '\t';
    else if (c == 'r') out += '\r';
    else if (c == '\\') out += '\\';
    else if (c == 'x' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      throw std::runtime_error("unsupported escape \\" + std::string(1, c) + " in fixture line: " + s);
    }
  }
  return out;
}

inline std::string tokenizer_fixture_path(const std::string& name) {
  return std::string(INFERSCOPE_SOURCE_DIR) + "/tests/fixtures/tokenizer/" + name;
}

inline std::vector<TokenizerCase> read_tokenizer_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture " + path);
  std::vector<TokenizerCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.rfind('\t');
    if (tab == std::string::npos) throw std::runtime_error("no TAB in fixture line: " + line);
    TokenizerCase c{unescape_case(line.substr(0, tab)), {}};
    std::istringstream ids(line.substr(tab + 1));
    for (int32_t id; ids >> id;) c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace inferscope::test
