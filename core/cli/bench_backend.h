// What bench names the backend its steps ran on, as llama-bench's "backends" column does: the CPU's
// kernel family or the CUDA device, with the activations and a quantization level other than the file's.
#pragma once
#include <string>
#include <string_view>

#include "core/engine/engine_config.h"

namespace inferscope::cli {

// `device`: where the steps ran (EngineMetricsSnapshot::device: "cpu", "cuda:0"), which after a device
// failure is the CPU, whatever `config` asked for.
std::string bench_backend(std::string_view device, const EngineConfig& config);

}  // namespace inferscope::cli
