// The engine a model command drives, chosen by its options: the local Engine on --model's file, or
// --endpoint's server through RemoteEngine. chat and generate run over it alike, through the
// InferenceEngine interface.
#pragma once
#include <memory>
#include <optional>

#include "core/cli/args.h"
#include "core/cli/endpoint_options.h"
#include "core/engine/engine_config.h"
#include "core/engine/engine_core_options.h"
#include "core/engine/inference_engine.h"
#include "core/model/llama_model.h"

namespace inferscope::cli {

struct EngineTarget {
  std::unique_ptr<LlamaModel> model;      // --model: the loaded model (null with --endpoint)
  std::optional<ConnectedServer> server;  // --endpoint: the server and the model it serves
  EngineConfig config;                    // --model: what the engine options set

  // Starts the engine with `callbacks`: the local one (built with `core`), or the server's.
  std::unique_ptr<InferenceEngine> start(EngineCallbacks callbacks, EngineCoreOptions core = {}) const;
};

// With --endpoint: refuses every option of the local engine by name, then connects. Else: refuses
// the server's options (--api-key, --served-model) by name, reads the engine options, then loads
// the model. UsageError, HttpError or the loader's error otherwise.
EngineTarget open_engine_target(const Args& args);

}  // namespace inferscope::cli
