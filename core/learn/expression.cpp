#include "core/learn/expression.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>

namespace inferscope {
namespace {

// Recursive descent over the text: logical > comparison > sum > product > unary > primary.
class Parser {
 public:
  Parser(const std::string& text, const ValueMap& values) : text_(text), values_(values) {}

  double parse() {
    const double v = logical();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + text_.substr(pos_, 1) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ExpressionError("expression \"" + text_ + "\": " + what + " at character " + std::to_string(pos_ + 1));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(const std::string& token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  // Both sides are always evaluated (a missing name is an error either way).
  double logical() {
    double v = comparison();
    while (true) {
      if (eat("&&")) {
        const double rhs = comparison();
        v = v != 0 && rhs != 0;
      } else if (eat("||")) {
        const double rhs = comparison();
        v = v != 0 || rhs != 0;
      } else {
        return v;
      }
    }
  }
  double comparison() {
    const double lhs = sum();
    for (const char* op : {"<=", ">=", "==", "<", ">"}) {
      if (!eat(op)) continue;
      const double rhs = sum();
      const std::string o = op;
      if (o == "<=") return lhs <= rhs;
      if (o == ">=") return lhs >= rhs;
      if (o == "==") return lhs == rhs;
      return o == "<" ? lhs < rhs : lhs > rhs;
    }
    return lhs;
  }
  double sum() {
    double v = product();
    while (true) {
      if (eat("+")) {
        v += product();
      } else if (eat("-")) {
        v -= product();
      } else {
        return v;
      }
    }
  }
  double product() {
    double v = unary();
    while (true) {
      if (eat("*")) {
        v *= unary();
      } else if (eat("/")) {
        v /= unary();
      } else {
        return v;
      }
    }
  }
  double unary() { return eat("-") ? -unary() : primary(); }
  double primary() {
    skip_space();
    if (eat("(")) {
      const double v = sum();
      if (!eat(")")) fail("missing ')'");
      return v;
    }
    if (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      char* end = nullptr;
      const double v = std::strtod(text_.c_str() + pos_, &end);
      pos_ = static_cast<size_t>(end - text_.c_str());
      return v;
    }
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (start == pos_) fail(pos_ < text_.size() ? "unexpected '" + text_.substr(pos_, 1) + "'" : "unexpected end");
    const std::string name = text_.substr(start, pos_ - start);
    if ((name == "min" || name == "max" || name == "pow") && eat("(")) {
      const double a = sum();
      if (!eat(",")) fail("expected ',' in " + name + "()");
      const double b = sum();
      if (!eat(")")) fail("missing ')'");
      if (name == "pow") return std::pow(a, b);
      return name == "min" ? std::min(a, b) : std::max(a, b);
    }
    const auto it = values_.find(name);
    if (it == values_.end()) {
      pos_ = start;
      fail("no value named '" + name + "'");
    }
    return it->second;
  }

  const std::string& text_;
  const ValueMap& values_;
  size_t pos_ = 0;
};

}  // namespace

double evaluate(const std::string& expression, const ValueMap& values) { return Parser(expression, values).parse(); }

}  // namespace inferscope
