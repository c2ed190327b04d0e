// What a comparison with llama.cpp says when its harnesses were not built (no INFERSCOPE_LLAMA_CPP).
#pragma once

namespace inferscope::test {

inline constexpr const char* kLlamaCppNotBuilt =
    "llama.cpp is not built here: run scripts/llama-cpp.sh and configure with "
    "-DINFERSCOPE_LLAMA_CPP=<the folder it prints> (scripts/test.sh does both)";

}  // namespace inferscope::test
