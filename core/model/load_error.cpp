#include "core/model/load_error.h"

#include "core/model/architecture.h"

namespace inferscope {
namespace {

bool has(std::string_view message, std::string_view part) { return message.find(part) != std::string_view::npos; }

}  // namespace

std::string load_error_summary(std::string_view message) {
  // The loader's messages (gguf_parser, gguf_cursor, gguf_file, model_config) name these cases.
  if (has(message, "(not a GGUF file)")) {
    return "This is not a GGUF file. Inferscope opens models in the GGUF format, the files named *.gguf that "
           "llama.cpp uses.";
  }
  if (has(message, "truncated") || has(message, "past the end of the file") || has(message, "bytes left")) {
    return "The file ends before its contents do: an unfinished download or a copy cut short. Download or copy it "
           "again.";
  }
  if (has(message, "is not supported (supported:")) {
    return "The model's architecture is not one Inferscope runs (it runs " + supported_architectures() + ").";
  }
  if (has(message, ": file: cannot open") || has(message, ": file: is not a regular file") || has(message, ": file: is empty")) {
    return "The file cannot be read as a model: it is missing, empty, not a regular file, or not readable.";
  }
  return "The file is a GGUF file, but not a model Inferscope can read: one of its fields or tensors is not what "
         "the model needs.";
}

}  // namespace inferscope
