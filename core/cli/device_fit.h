// serve-sim --dry-run on a device profile: --tensor-parallel N (the model split over N devices, its
// all-reduces priced on the device's link), and whether each device's share of the weights and the
// KV budget fits its memory.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/cli/args.h"
#include "core/model/llama_model.h"
#include "core/quant/weight_quant.h"
#include "core/servesim/device_profile.h"
#include "core/servesim/tensor_parallel.h"

namespace inferscope::cli {

// One device's share of the model and of the KV cache.
struct DeviceFit {
  int32_t devices = 1;
  double weight_bytes = 0;     // every weight matrix of the model, at the level priced
  double kv_budget_bytes = 0;  // the whole KV cache (every device's share of every token)
  double memory_bytes = 0;     // one device's memory (0: the profile gives none)
  double weights_per_device() const { return weight_bytes / devices; }
  double kv_per_device() const { return kv_budget_bytes / devices; }
  bool fits() const { return memory_bytes == 0 || weights_per_device() + kv_per_device() <= memory_bytes; }
  nlohmann::json json() const;
  std::string text() const;  // "TP 2: weights 70.1 GiB + KV budget 40.0 GiB per device of 131.3 GiB memory (fits)"
};

// --tensor-parallel N (default 1) on `device` for `config`: UsageError without --dry-run, on a device
// with no roofline or (N > 1) no link, or for N that does not divide the heads and KV heads.
TensorParallel tensor_parallel(const Args& args, const DeviceProfile& device, const LlamaConfig& config);

// The bytes of every weight matrix of `model` at `level` (a shape-only model's own format at native).
double weight_bytes_at(const LlamaModel& model, WeightQuant level);

// UsageError when the weights exceed the memory of all the devices together, or one device's share
// of the weights and the KV budget exceeds its memory.
void check_fits(const DeviceFit& fit, const std::string& device_name);

}  // namespace inferscope::cli
