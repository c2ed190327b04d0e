#include "core/cli/remote_generate.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/endpoint_options.h"
#include "core/cli/sampling_options.h"
#include "core/remote/remote_completion.h"
#include "core/remote/remote_request.h"

namespace inferscope::cli {
namespace {

// What the server measured and counted, beside the client's own clock (JSON null when not reported).
nlohmann::json reply_json(const RemoteReply& reply, const ConnectedServer& server) {
  const ClientTiming& t = reply.timing;
  const bool counted = reply.usage.has_value();
  const int64_t generated = counted ? reply.usage->completion_tokens : 0;
  const double decode_s = t.e2e_s - t.time_to_first_token_s;
  nlohmann::json out;
  out["text"] = reply.text;
  if (!reply.reasoning.empty()) out["reasoning"] = reply.reasoning;
  out["tokens"] = nullptr;  // servers stream text, not token ids
  out["prompt_tokens"] = counted ? nlohmann::json(reply.usage->prompt_tokens) : nlohmann::json();
  out["completion_tokens"] = counted ? nlohmann::json(generated) : nlohmann::json();
  out["finish_reason"] = reply.finish_reason;
  out["metrics"] = {
      {"time_to_first_token_seconds", t.time_to_first_token_s >= 0 ? nlohmann::json(t.time_to_first_token_s) : nlohmann::json()},
      {"e2e_request_latency_seconds", t.e2e_s},
      {"decode_tokens_per_second",
       counted && generated > 1 && decode_s > 0 ? nlohmann::json(static_cast<double>(generated - 1) / decode_s) : nlohmann::json()}};
  out["server"] = {{"kind", server_kind_name(server.info.kind)}, {"url", server.endpoint.base_url}, {"model", server.endpoint.model}};
  if (reply.timings) {
    const ServerTimings& s = *reply.timings;
    out["server"]["timings"] = {{"prompt_n", s.prompt_n}, {"prompt_ms", s.prompt_ms}, {"predicted_n", s.predicted_n},
                                {"predicted_ms", s.predicted_ms}};
  }
  nlohmann::json unavailable = nlohmann::json::array({"tokens"});
  if (!counted) {
    for (const char* key : {"prompt_tokens", "completion_tokens", "decode_tokens_per_second"}) unavailable.push_back(key);
  }
  out["unavailable"] = unavailable;
  return out;
}

}  // namespace

int generate_on_endpoint(const Args& args) {
  const ConnectedServer server = connect_endpoint(args);
  const SamplingParams sampling = sampling_params(args);
  const int32_t n_predict = static_cast<int32_t>(args.integer("--n-predict", 256, -1, 1 << 30));
  const bool json = args.has("--json");
  nlohmann::json body;
  std::string path;
  if (args.has("--prompt")) {
    path = "/v1/completions";
    body = completion_request_body(server.endpoint, server.info.kind, args.str("--prompt", ""), sampling, n_predict);
  } else {
    std::vector<ChatMessage> messages;
    if (args.has("--system")) messages.push_back({"system", args.str("--system", "")});
    messages.push_back({"user", args.str("--chat", "")});
    path = "/v1/chat/completions";
    body = chat_request_body(server.endpoint, server.info.kind, messages, sampling, n_predict);
  }
  RemoteStreamCallbacks callbacks;
  if (!json) {
    callbacks.on_content = [](std::string_view text, double) { std::cout << text << std::flush; };
    callbacks.on_reasoning = [](std::string_view text, double) { std::cerr << text << std::flush; };
  }
  const RemoteReply reply = stream_completion(server.endpoint, path, body, callbacks);
  if (reply.outcome == RemoteOutcome::Failed) {
    if (!json) std::cout << "\n";
    throw std::runtime_error(reply.error);
  }
  if (json) {
    std::cout << reply_json(reply, server).dump(2) << "\n";
  } else {
    std::cout << "\n";
  }
  return 0;
}

}  // namespace inferscope::cli
