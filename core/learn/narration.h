// Fills an experiment's narration with what it measured: each "{expression}" or
// "{expression:format}" in the text becomes the expression's value (core/learn/expression.h).
// Formats: ".Nf" (N decimals), "%" (a fraction as a percentage, 1 decimal), "mib" (bytes as MiB,
// 2 decimals), "ms" (seconds as milliseconds, 1 decimal), "time" (seconds in µs, ms or s, whichever
// shows them), "change" (a ratio new / old as "rose to 1.26×",
// "fell to 0.80×" or "stayed the same (1.00×)", worded from its value), "yes" (non-zero: yes, else no), "divergence"
// (a first_divergence: "at token N", or "nowhere (identical)" for -1); none: an integer when whole,
// else 3 significant digits. "{{" and "}}" are literal braces.
#pragma once
#include <string>

#include "core/learn/expression.h"

namespace inferscope {

// Throws ExpressionError naming the placeholder (a bad expression, format or an unclosed brace).
std::string fill_narration(const std::string& text, const ValueMap& values);

// One value in a format as above.
std::string format_value(double value, const std::string& format);

}  // namespace inferscope
