// What a failed model load means, in a sentence a user can act on, above the loader's exact message
// (which names the file, the field and the value): not a GGUF file, a file cut short, an architecture
// Inferscope does not run, a file it cannot open, or a GGUF file that is not a model it can read.
#pragma once
#include <string>
#include <string_view>

namespace inferscope {

// One or two sentences for `message`, the what() of a failed LlamaModel::load.
std::string load_error_summary(std::string_view message);

}  // namespace inferscope
