// The arithmetic of an experiment's narration (resources/experiments/*.json): expressions over the
// values a run measured, such as "naive.attention_ms / flash.attention_ms" or
// "paged.max_concurrent_requests > contiguous.max_concurrent_requests". Numbers, value names (letters,
// digits, '_' and '.'), + - * /, parentheses, min(a, b), max(a, b), pow(a, b), comparisons (< <= > >= ==) that
// give 1 or 0, and && / || between comparisons.
#pragma once
#include <map>
#include <stdexcept>
#include <string>

namespace inferscope {

using ValueMap = std::map<std::string, double>;

struct ExpressionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws ExpressionError naming the expression and what is wrong: a syntax error or a name not in `values`.
// Division by 0 gives inf or NaN, as in C.
double evaluate(const std::string& expression, const ValueMap& values);

}  // namespace inferscope
