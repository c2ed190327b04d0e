// Options of the subcommands that can run against a remote server instead of the local engine
// (--endpoint URL, --api-key, --served-model), and connecting to it.
#pragma once
#include <vector>

#include "core/cli/args.h"
#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"

namespace inferscope::cli {

// --endpoint, --api-key, --served-model
std::vector<OptionSpec> endpoint_option_specs();

struct ConnectedServer {
  RemoteEndpoint endpoint;  // its model filled in from the server's list when --served-model is absent
  ServerInfo info;
};

// Checks the URL, asks the server what it is (server_probe.h) and picks the model: --served-model
// (which must be in the server's list), else the server's first. The API key comes from --api-key or
// INFERSCOPE_API_KEY. UsageError for a bad URL or an unknown model; HttpError when the server does
// not answer.
ConnectedServer connect_endpoint(const Args& args);

// UsageError when any of the `local` options (of the local engine: --model, --kv, ...) was given
// together with --endpoint, naming it: the server decides those.
void refuse_local_options(const Args& args, const std::vector<std::string>& local);

}  // namespace inferscope::cli
