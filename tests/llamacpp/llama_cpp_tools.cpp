#include "tests/llamacpp/llama_cpp_tools.h"

#include <cstdio>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace inferscope::test {

std::string command_output(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed:\n" + out);
  return out;
}

std::vector<std::vector<float>> llama_cpp_logits(const std::string& llama_logits, const std::string& model,
                                                 const std::vector<TokenId>& tokens) {
  std::vector<std::vector<float>> rows;
  std::ostringstream command;
  command << llama_logits << ' ' << model;
  for (TokenId id : tokens) command << ' ' << id;
  std::istringstream lines(command_output(command.str()));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream values(line);
    rows.emplace_back();
    for (float v; values >> v;) rows.back().push_back(v);
  }
  return rows;
}

std::vector<std::vector<TopLogprob>> llama_cpp_top_logprobs(const std::string& llama_logits, const std::string& model,
                                                            const std::vector<TokenId>& tokens, int k) {
  std::vector<std::vector<TopLogprob>> rows;
  std::ostringstream command;
  command << llama_logits << ' ' << model << " --top " << k;
  for (TokenId id : tokens) command << ' ' << id;
  std::istringstream lines(command_output(command.str()));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream values(line);
    rows.emplace_back();
    for (TopLogprob t; values >> t.id >> t.logprob;) rows.back().push_back(t);
  }
  return rows;
}

void write_f32_copy(const std::string& llama_quantize, const std::string& model, const std::string& out) {
  command_output(llama_quantize + " --allow-requantize " + model + " " + out + " F32 2 2>&1");
}

double llama_cpp_perplexity(const std::string& llama_perplexity, const std::string& model,
                            const std::string& text_file, int ctx, int chunks, int threads, bool f32_kv) {
  const std::string c = std::to_string(ctx);
  const std::string out = command_output(llama_perplexity + " -m " + model + " -f " + text_file + " -c " + c + " -b " + c +
                                         " --chunks " + std::to_string(chunks) + " -t " + std::to_string(threads) +
                                         (f32_kv ? " -ctk f32 -ctv f32 -fa off" : "") + " 2>&1");
  static const std::regex final_estimate(R"(Final estimate: PPL = ([0-9.eE+-]+))");
  std::smatch m;
  if (!std::regex_search(out, m, final_estimate)) throw std::runtime_error("no final estimate from llama-perplexity:\n" + out);
  return std::stod(m[1].str());
}

}  // namespace inferscope::test
