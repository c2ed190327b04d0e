// inferscope-cli generate --endpoint: the same completion, streamed from a remote server.
#pragma once
#include "core/cli/args.h"

namespace inferscope::cli {

// Runs `generate`'s --prompt / --chat / --system / --n-predict / --json and sampling options against
// the server --endpoint names; returns the exit code.
int generate_on_endpoint(const Args& args);

}  // namespace inferscope::cli
