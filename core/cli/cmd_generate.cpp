// inferscope-cli generate: stream a completion of a prompt or a chat message, from the local engine
// (--model) or a server (--endpoint), one request through the InferenceEngine interface either way.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/cli/commands.h"
#include "core/cli/endpoint_options.h"
#include "core/cli/engine_target.h"
#include "core/engine/metrics_json.h"
#include "core/cli/model_options.h"
#include "core/cli/sampling_options.h"
#include "core/remote/server_probe.h"
#include "core/sample/logprobs.h"

namespace inferscope::cli {
namespace {

// A log-probability as %.9g prints it: nine significant digits name a float exactly, so equal
// floats print equal and different ones differently (JSON keeps the shortest form of that value).
double printed(double logprob) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(logprob)));
  return std::strtod(buf, nullptr);
}

nlohmann::json logprob_entry(const Tokenizer& tokenizer, TokenId id, double logprob) {
  return {{"token", tokenizer.token_to_piece(id)}, {"id", id}, {"logprob", printed(logprob)}};
}

// OpenAI's logprobs.content: each generated token's log-probability and its top_k alternatives,
// from the model's raw logits (before penalties, temperature and filters).
nlohmann::json logprobs_json(const Tokenizer& tokenizer, const std::vector<std::vector<float>>& rows,
                             const std::vector<TokenId>& tokens, int32_t top_k) {
  nlohmann::json content = nlohmann::json::array();
  for (size_t i = 0; i < tokens.size() && i < rows.size(); ++i) {
    nlohmann::json entry = logprob_entry(tokenizer, tokens[i], log_probability(rows[i], tokens[i]));
    entry["top_logprobs"] = nlohmann::json::array();
    for (const TokenLogprob& t : top_logprobs(rows[i], top_k)) {
      entry["top_logprobs"].push_back(logprob_entry(tokenizer, t.id, t.logprob));
    }
    content.push_back(std::move(entry));
  }
  return {{"content", content}};
}

// What the engine's callbacks delivered of the one request, until it ended.
struct Reply {
  std::mutex mu;
  std::condition_variable ended_cv;
  bool ended = false;
  StopReason reason = StopReason::Length;
  std::string text, reasoning, error;
  std::vector<TokenId> tokens;                   // the local engine's ids (a server streams text)
  std::vector<std::vector<float>> logit_rows;    // the logits each output token was sampled from
  std::optional<std::pair<int32_t, int32_t>> usage;  // a server's prompt and generated counts
  std::optional<ServerTimings> timings;          // a server's own timing of it

  EngineCallbacks callbacks(bool stream) {
    EngineCallbacks c;
    c.on_token = [this, stream](RequestId, std::string_view piece, TokenId token, const TokenTiming&) {
      std::lock_guard lock(mu);
      if (token >= 0) tokens.push_back(token);
      text += piece;
      if (stream) std::cout << piece << std::flush;
    };
    c.on_reasoning = [this, stream](RequestId, std::string_view piece) {
      std::lock_guard lock(mu);
      reasoning += piece;
      if (stream) std::cerr << piece << std::flush;
    };
    c.on_logits = [this](RequestId, int32_t, std::span<const float> logits) {
      std::lock_guard lock(mu);
      logit_rows.emplace_back(logits.begin(), logits.end());
    };
    c.on_usage = [this](RequestId, int32_t prompt, int32_t generated) {
      std::lock_guard lock(mu);
      usage = {prompt, generated};
    };
    c.on_server_timings = [this](RequestId, const ServerTimings& t) {
      std::lock_guard lock(mu);
      timings = t;
    };
    c.on_error = [this](RequestId, const std::string& message) {
      std::lock_guard lock(mu);
      error = message;
    };
    c.on_finished = [this](RequestId, StopReason r) {
      std::lock_guard lock(mu);
      reason = r;
      ended = true;
      ended_cv.notify_all();
    };
    return c;
  }

  void wait() {
    std::unique_lock lock(mu);
    ended_cv.wait(lock, [this] { return ended; });
  }
};

// The value, or JSON null where it was not measured.
template <typename T>
nlohmann::json number_or_null(std::optional<T> v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--prompt", "-p", true, "text to continue (\"\" = start from BOS)"},
      {"--chat", "", true, "a user message, rendered with the model's chat template"},
      {"--system", "", true, "system prompt for --chat (default: the template's own, if any)"},
      {"--n-predict", "-n", true, "tokens to generate at most (default 256; -1: until EOS or the context ends)"},
      {"--json", "", false, "print one JSON object (text, tokens, metrics) instead of streaming"},
      {"--logprobs", "", true,
       "with --json: each generated token's log-probability and its K most likely alternatives (0-20), from the raw logits"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(s);
  for (OptionSpec& s : endpoint_option_specs()) specs.push_back(s);
  if (print_help_if_asked("generate (--model PATH | --endpoint URL) (--prompt TEXT | --chat TEXT [--system TEXT]) [options]",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  if (args.has("--prompt") == args.has("--chat")) throw UsageError("give exactly one of --prompt and --chat");
  if (args.has("--system") && !args.has("--chat")) throw UsageError("--system needs --chat");
  if (args.has("--logprobs") && !args.has("--json")) throw UsageError("--logprobs needs --json");
  const int64_t n_predict = args.integer("--n-predict", 256, -1, 1 << 30);
  const int32_t top_k = static_cast<int32_t>(args.integer("--logprobs", 0, 0, 20));
  const bool json = args.has("--json");
  const SamplingParams sampling = sampling_params(args);
  const EngineTarget target = open_engine_target(args);
  if (target.server && args.has("--logprobs")) throw UsageError("--logprobs runs on the local engine only");

  EngineRequest request;
  if (args.has("--prompt")) {
    request.prompt = args.str("--prompt", "");
  } else {
    if (args.has("--system")) request.messages.push_back({"system", args.str("--system", "")});
    request.messages.push_back({"user", args.str("--chat", "")});
  }
  request.sampling = sampling;
  request.max_tokens = static_cast<int32_t>(std::max<int64_t>(n_predict, 0));  // 0: as many as the context allows
  request.up_to_context = true;
  if (args.has("--logprobs")) request.logits = LogitsOutput::Sampled;

  Reply reply;
  EngineCoreOptions core;
  core.conversion_progress = conversion_progress_printer(target.config.quant);
  std::unique_ptr<InferenceEngine> engine = target.start(reply.callbacks(!json), std::move(core));
  const RequestId id = engine->submit(std::move(request));
  reply.wait();
  const EngineMetricsSnapshot snapshot = engine->metrics_snapshot();
  engine.reset();  // joins the engine's threads: the reply is complete
  if (reply.reason == StopReason::Failed) {
    if (!json) std::cout << "\n";
    throw std::runtime_error(reply.error);
  }
  const auto record = std::find_if(snapshot.requests.begin(), snapshot.requests.end(),
                                   [&](const RequestMetrics& m) { return m.id == id; });
  const RequestMetrics m = record != snapshot.requests.end() ? *record : RequestMetrics{};
  // The local engine counts what it computed; a server counts only in its usage report.
  const std::optional<int64_t> prompt_tokens =
      target.model ? std::optional<int64_t>(m.prompt_tokens)
                   : reply.usage ? std::optional<int64_t>(reply.usage->first) : std::nullopt;
  const std::optional<int64_t> generated =
      target.model ? std::optional<int64_t>(reply.tokens.size())
                   : reply.usage ? std::optional<int64_t>(reply.usage->second) : std::nullopt;
  // -n beyond the room the context leaves (or -1) stops where the context ends.
  const bool context_full = target.model && reply.reason == StopReason::Length &&
                            (n_predict < 0 || static_cast<int64_t>(reply.tokens.size()) < n_predict);
  if (context_full) {
    std::cerr << "\n[stopped: the context length of " << resolve_config(target.config, *target.model).context_length
              << " tokens is reached]\n";
  }
  if (!json) {
    std::cout << "\n";
    return 0;
  }
  const double ttft = m.time_to_first_token_seconds;
  const double decode_s = m.e2e_request_latency_seconds - ttft;
  nlohmann::json out;
  out["text"] = reply.text;
  if (!reply.reasoning.empty()) out["reasoning"] = reply.reasoning;
  out["tokens"] = target.model ? nlohmann::json(reply.tokens) : nlohmann::json();  // servers stream text, not ids
  out["prompt_tokens"] = number_or_null(prompt_tokens);
  out["completion_tokens"] = number_or_null(generated);
  out["finish_reason"] = context_full ? "context" : stop_reason_name(reply.reason);
  out["metrics"] = {
      {"time_to_first_token_seconds", number_or_null(ttft >= 0 ? std::optional<double>(ttft) : std::nullopt)},
      {"e2e_request_latency_seconds", m.e2e_request_latency_seconds},
      {"prefill_tokens_per_second",
       number_or_null(prompt_tokens && ttft > 0 ? std::optional<double>(static_cast<double>(*prompt_tokens) / ttft)
                                                : std::nullopt)},
      {"decode_tokens_per_second",
       number_or_null(generated && *generated > 1 && decode_s > 0
                          ? std::optional<double>(static_cast<double>(*generated - 1) / decode_s)
                          : std::nullopt)}};
  if (target.model && target.config.spec.enabled()) {
    out["metrics"]["spec_mode"] = spec_mode_name(target.config.spec.mode);
    out["metrics"]["spec_decode"] = spec_json(m.spec);
  }
  if (args.has("--logprobs")) out["logprobs"] = logprobs_json(target.model->tokenizer(), reply.logit_rows, reply.tokens, top_k);
  if (target.server) {
    const ConnectedServer& server = *target.server;
    out["server"] = {{"kind", server_kind_name(server.info.kind)}, {"url", server.endpoint.base_url},
                     {"model", server.endpoint.model}};
    if (reply.timings) {
      const ServerTimings& t = *reply.timings;
      out["server"]["timings"] = {{"prompt_n", t.prompt_n}, {"prompt_ms", t.prompt_ms},
                                  {"predicted_n", t.predicted_n}, {"predicted_ms", t.predicted_ms}};
    }
    nlohmann::json unavailable = nlohmann::json::array({"tokens"});
    if (!reply.usage) {
      for (const char* key : {"prompt_tokens", "completion_tokens", "prefill_tokens_per_second", "decode_tokens_per_second"}) {
        unavailable.push_back(key);
      }
    }
    out["unavailable"] = unavailable;
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace inferscope::cli
