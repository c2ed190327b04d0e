// inferscope-cli quantize: save a model with its matrices at another quantization level.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/gguf/gguf_file.h"
#include "core/quant/quantized_gguf.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope::cli {
namespace {

std::string mib(uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

// Each 2-D tensor's format, as llama-quantize lists them: "blk.0.attn_v.weight  f32 -> q8_0 (q6_K wanted:
// rows of 576 are not whole blocks)", then the bytes each stored format holds.
void print_formats(const std::vector<TensorFormat>& formats) {
  size_t width = 0;
  for (const TensorFormat& f : formats) width = std::max(width, f.name.size());
  for (const TensorFormat& f : formats) {
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << f.name << dtype_name(f.source) << " -> "
              << dtype_name(f.format.stored);
    if (f.format.fallback()) {
      std::cout << " (" << dtype_name(f.format.wanted) << " wanted: rows of " << f.cols << " are not whole blocks)";
    }
    std::cout << "\n";
  }
  for (const FormatTotal& t : format_totals(formats)) std::cout << t.type << ": " << t.tensors << " tensors, " << mib(t.bytes) << "\n";
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", true, "input GGUF model file"},
      {"--quant", "", true, "f32 | f16 | q8 (Q8_0) | q4 (Q4_0) | q4_1 (Q4_1) | q4_k (Q4_K_M mix) | q6_k (Q6_K)"},
      {"--out", "-o", true, "output GGUF file (written atomically; never the input)"},
      {"--threads", "-t", true, "worker threads (default: all cores)"},
  };
  if (print_help_if_asked("quantize --model IN --quant LEVEL --out OUT.gguf   (2-D weights are converted with "
                          "llama.cpp's per-tensor policy; rows that are not whole blocks of a format fall back as "
                          "llama.cpp's do; every tensor's format is listed)",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const std::string in_path = args.required("--model"), out_path = args.required("--out");
  if (!args.has("--quant")) throw UsageError("--quant is required: one of " + weight_quant_names() + " but native");
  const WeightQuant level = weight_quant(args);
  if (level == WeightQuant::Native) throw UsageError("--quant: native keeps the file as it is; choose another level");
  ThreadPool pool(static_cast<int>(args.integer("--threads", 0, 0, 1024)));

  // Loading checks that the input is a model we can run (and so read every tensor of).
  const auto model = LlamaModel::load(in_path);
  const QuantizedFileSummary s =
      write_quantized_gguf(model->file(), level, out_path, pool, ConversionControl{conversion_progress_printer(level)});
  print_formats(s.formats);
  std::cout << "wrote " << out_path << " at " << weight_quant_name(level) << ": " << s.converted << " of " << s.tensors
            << " tensors converted, the rest copied unchanged\n";
  std::cout << "tensor data " << mib(s.input_tensor_bytes) << " -> " << mib(s.output_tensor_bytes) << "; file "
            << mib(std::filesystem::file_size(out_path)) << "\n";
  return 0;
}

}  // namespace inferscope::cli
