// Which server answers at an endpoint (llama.cpp's llama-server, vLLM, SGLang) and what it serves:
// read from /v1/models (its owned_by), llama-server's /props and, failing those, the metric prefixes
// of /metrics. The readers of each body are pure; probe_server asks the server.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/remote/metric_snapshot.h"
#include "core/remote/remote_endpoint.h"

namespace inferscope {

enum class ServerKind { LlamaCpp, Vllm, Sglang, Inferscope, Unknown };

// "llama.cpp", "vLLM", "SGLang", "Inferscope" (inferscope-cli serve), "unknown".
std::string_view server_kind_name(ServerKind kind);

struct ServerInfo {
  ServerKind kind = ServerKind::Unknown;
  std::string detected_by;                 // what told the kind: "/v1/models", "/props", "/metrics"
  std::vector<std::string> models;         // the ids /v1/models lists
  std::optional<int64_t> context_length;   // llama-server's n_ctx per slot, vLLM's max_model_len
  std::optional<int64_t> slot_count;       // llama-server's total_slots
  std::string build;                       // llama-server's build_info, when it says
  // From /metrics, when it answers: the releases whose metric names it fits ("vLLM 0.9.2 to 0.11.0")
  // and the quantities it does not publish (server_metric_table.h).
  std::string metrics_release, metrics_unpublished;
};

// /v1/models: the ids, and the kind when owned_by names a server. Throws std::runtime_error naming
// what is malformed.
ServerInfo read_models_list(std::string_view body);
// llama-server's /props into `info` (kind, context length, slots, build); false when the body is not
// llama-server's props.
bool read_llama_props(std::string_view body, ServerInfo& info);
// The kind whose metric prefix ("vllm:", "sglang:", "llamacpp:") the scrape uses, else Unknown.
ServerKind kind_from_metrics(const MetricSnapshot& metrics);

// Asks the server (each request with `timeout_s`): /v1/models must answer (HttpError otherwise);
// /props is tried only while the kind is still unknown or for llama-server's details; /metrics for
// the kind while unknown and for the release range.
// `cancel` ends the probe with HttpError(Cancelled) within 100 ms.
ServerInfo probe_server(const RemoteEndpoint& endpoint, double timeout_s = 5, const std::atomic<bool>* cancel = nullptr);

}  // namespace inferscope
