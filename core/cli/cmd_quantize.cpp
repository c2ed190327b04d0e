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

}  // namespace

int cmd_quantize(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--model", "-m", true, "input GGUF model file"},
      {"--quant", "", true, "f32 | f16 | q8 (Q8_0) | q4 (Q4_0) | q4_1 (Q4_1)"},
      {"--out", "-o", true, "output GGUF file (written atomically; never the input)"},
      {"--threads", "-t", true, "worker threads (default: all cores)"},
  };
  if (print_help_if_asked("quantize --model IN --quant q8|q4|q4_1|f16|f32 --out OUT.gguf   (2-D weights are "
                          "converted; rows that are not whole blocks of the level are stored as f16)",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const std::string in_path = args.required("--model"), out_path = args.required("--out");
  if (!args.has("--quant")) throw UsageError("--quant is required: f32, f16, q8, q4 or q4_1");
  const WeightQuant level = weight_quant(args);
  if (level == WeightQuant::Native) throw UsageError("--quant: native keeps the file as it is; choose f32, f16, q8, q4 or q4_1");
  ThreadPool pool(static_cast<int>(args.integer("--threads", 0, 0, 1024)));

  // Loading checks that the input is a model we can run (and so read every tensor of).
  const auto model = LlamaModel::load(in_path);
  const QuantizedFileSummary s =
      write_quantized_gguf(model->file(), level, out_path, pool, ConversionControl{conversion_progress_printer(level)});
  std::cout << "wrote " << out_path << " at " << weight_quant_name(level) << ": " << s.converted << " of " << s.tensors
            << " tensors converted, the rest copied unchanged\n";
  if (!s.f16_fallbacks.empty()) {
    std::cout << "stored as f16 (rows not whole blocks of " << weight_quant_name(level) << "):";
    for (const std::string& name : s.f16_fallbacks) std::cout << " " << name;
    std::cout << "\n";
  }
  std::cout << "tensor data " << mib(s.input_tensor_bytes) << " -> " << mib(s.output_tensor_bytes) << "; file "
            << mib(std::filesystem::file_size(out_path)) << "\n";
  return 0;
}

}  // namespace inferscope::cli
