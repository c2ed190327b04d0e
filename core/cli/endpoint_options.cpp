#include "core/cli/endpoint_options.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace inferscope::cli {

std::vector<OptionSpec> endpoint_option_specs() {
  return {
      {"--endpoint", "", true, "run on this OpenAI-compatible server (llama-server, vLLM, SGLang) instead of a local model"},
      {"--api-key", "", true, "with --endpoint: the server's API key (default: $INFERSCOPE_API_KEY)"},
      {"--served-model", "", true, "with --endpoint: the model to ask for (default: the server's first in /v1/models)"},
  };
}

ConnectedServer connect_endpoint(const Args& args) {
  const char* env_key = std::getenv("INFERSCOPE_API_KEY");
  ConnectedServer server;
  try {
    server.endpoint = make_endpoint(args.required("--endpoint"), args.str("--api-key", env_key ? env_key : ""),
                                    args.str("--served-model", ""));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--endpoint: ") + e.what());
  }
  server.info = probe_server(server.endpoint);
  const std::vector<std::string>& models = server.info.models;
  if (server.endpoint.model.empty()) {
    if (models.empty()) throw std::runtime_error(server.endpoint.base_url + "/v1/models lists no model");
    server.endpoint.model = models.front();
  } else if (std::find(models.begin(), models.end(), server.endpoint.model) == models.end()) {
    std::string list;
    for (const std::string& m : models) list += (list.empty() ? "" : ", ") + m;
    throw UsageError("--served-model " + server.endpoint.model + ": the server serves " + (list.empty() ? "no model" : list));
  }
  return server;
}

void refuse_local_options(const Args& args, const std::vector<std::string>& local) {
  for (const std::string& name : local) {
    if (args.has(name)) throw UsageError(name + " configures the local engine; with --endpoint the server decides");
  }
}

}  // namespace inferscope::cli
