#include "core/cli/engine_target.h"

#include <string>

#include "core/cli/model_options.h"
#include "core/engine/engine.h"
#include "core/remote/remote_engine.h"

namespace inferscope::cli {

std::unique_ptr<InferenceEngine> EngineTarget::start(EngineCallbacks callbacks, EngineCoreOptions core) const {
  if (server) return std::make_unique<RemoteEngine>(server->endpoint, server->info, std::move(callbacks));
  return std::make_unique<Engine>(*model, config, std::move(callbacks), std::move(core));
}

EngineTarget open_engine_target(const Args& args) {
  EngineTarget target;
  if (args.has("--endpoint")) {
    refuse_local_options(args, option_names(model_option_specs()));
    target.server = connect_endpoint(args);
    return target;
  }
  for (const OptionSpec& remote_only : endpoint_option_specs()) {
    if (remote_only.name != "--endpoint" && args.has(remote_only.name)) {
      throw UsageError(remote_only.name + " needs --endpoint");
    }
  }
  target.config = engine_config(args);
  target.model = load_model(args);
  return target;
}

}  // namespace inferscope::cli
