// inferscope-cli serve: the loaded model behind an OpenAI-compatible HTTP server (core/server), every
// request a request of one continuous-batching engine. SIGINT or SIGTERM drains: no new connections,
// the requests in flight get --drain-timeout seconds to finish, then are cancelled, and it exits 0.
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/engine/engine.h"
#include "core/server/openai_server.h"

namespace inferscope::cli {
namespace {

// With no --kv-budget-mib, room for this many full-context sequences (the workbench's default), so
// concurrent clients share the cache rather than queue behind one.
constexpr int32_t kServedSequences = 4;

// The key from --api-key-file (its first line) or INFERSCOPE_API_KEY; "" when neither gives one.
std::string api_key(const Args& args) {
  if (args.has("--api-key-file")) {
    const std::string path = args.str("--api-key-file", "");
    std::ifstream in(path);
    std::string key;
    if (!in || !std::getline(in, key)) throw UsageError("--api-key-file: cannot read a key from " + path);
    while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
    if (key.empty()) throw UsageError("--api-key-file: " + path + " starts with an empty line");
    return key;
  }
  const char* env = std::getenv("INFERSCOPE_API_KEY");
  return env == nullptr ? std::string() : std::string(env);
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  const std::vector<OptionSpec> specs = with_model_options({
      {"--host", "", true, "address to listen on (default 127.0.0.1; another needs an API key)"},
      {"--port", "", true, "port to listen on (default 8080; 0: any free one, printed)"},
      {"--api-key-file", "", true, "ask every client for the key on this file's first line (Authorization: Bearer KEY); "
                                   "without it, INFERSCOPE_API_KEY's value if set"},
      {"--cors-origin", "", true, "send CORS headers allowing this origin (default: none)"},
      {"--max-body-mib", "", true, "largest request body in MiB (default 8; larger: HTTP 413)"},
      {"--max-queue", "", true, "requests that may wait for the engine beyond those it runs (default 256; more: HTTP 503 "
                                "with Retry-After; 0: no limit)"},
      {"--write-timeout", "", true, "seconds a client may read nothing before its stream is cancelled (default 30)"},
      {"--drain-timeout", "", true, "on SIGINT/SIGTERM, seconds the requests in flight get to finish before they are cancelled (default 30)"},
  });
  if (print_help_if_asked("serve --model PATH [--host ADDR] [--port N] [--api-key-file FILE] [--cors-origin ORIGIN] "
                          "[--max-body-mib M] [--max-queue N] [--write-timeout S] [--drain-timeout S] [engine options]",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  ServeOptions options;
  options.host = args.str("--host", "127.0.0.1");
  options.port = static_cast<int32_t>(args.integer("--port", 8080, 0, 65535));
  options.api_key = api_key(args);
  options.cors_origin = args.str("--cors-origin", "");
  options.max_body_bytes = static_cast<size_t>(args.integer("--max-body-mib", 8, 1, 1024)) << 20;
  options.max_queue = static_cast<int32_t>(args.integer("--max-queue", 256, 0, 1 << 20));
  options.write_timeout_s = args.real("--write-timeout", 30, 1, 3600);
  const double drain_s = args.real("--drain-timeout", 30, 0, 3600);
  if (!loopback_host(options.host) && options.api_key.empty()) {
    throw UsageError("--host " + options.host + " opens the server beyond this machine: set an API key first, with "
                     "--api-key-file FILE or INFERSCOPE_API_KEY=KEY");
  }
  EngineConfig config = engine_config(args);
  if (!args.has("--kv-budget-mib")) config.budget_sequences = kServedSequences;
  const std::unique_ptr<LlamaModel> model = load_model(args);
  options.context_length = resolve_config(config, *model).context_length;

  // SIGINT and SIGTERM are taken by one thread (sigwait), so every other thread, blocked here before
  // any starts, runs on undisturbed.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  RequestStreams streams;
  Engine engine(*model, config, streams.callbacks());
  OpenAiServer server(*model, engine, streams, options);
  std::cout << "inferscope-cli serve: " << model->config().name << " at " << server.url() << "/v1 (Ctrl-C drains and stops)"
            << std::endl;
  std::thread on_signal([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::cerr << "inferscope-cli serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM") << ": draining (up to " << drain_s
              << " s)" << std::endl;
    server.stop(drain_s);
  });
  server.serve();
  on_signal.join();
  return 0;
}

}  // namespace inferscope::cli
