#include "core/remote/server_probe.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/remote/http_client.h"
#include "core/remote/server_metric_table.h"
#include "core/remote/text_excerpt.h"

namespace inferscope {
namespace {

using nlohmann::json;

ServerKind kind_from_owner(std::string_view owner) {
  if (owner == "llamacpp") return ServerKind::LlamaCpp;
  if (owner == "vllm") return ServerKind::Vllm;
  if (owner == "sglang") return ServerKind::Sglang;
  if (owner == "inferscope") return ServerKind::Inferscope;
  return ServerKind::Unknown;
}

HttpResponse get(const RemoteEndpoint& endpoint, std::string_view path, double timeout_s, const std::atomic<bool>* cancel) {
  HttpRequest request;
  request.url = endpoint_url(endpoint, path);
  request.headers = endpoint_headers(endpoint);
  request.connect_timeout_s = timeout_s;
  request.total_timeout_s = timeout_s;
  return http_perform(request, {}, cancel);
}

}  // namespace

std::string_view server_kind_name(ServerKind kind) {
  switch (kind) {
    case ServerKind::LlamaCpp: return "llama.cpp";
    case ServerKind::Vllm: return "vLLM";
    case ServerKind::Sglang: return "SGLang";
    case ServerKind::Inferscope: return "Inferscope";
    case ServerKind::Unknown: break;
  }
  return "unknown";
}

ServerInfo read_models_list(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) {
    throw std::runtime_error("/v1/models: expected {\"data\": [...]}, got " + text_excerpt(body));
  }
  ServerInfo info;
  for (const json& model : j["data"]) {
    if (!model.is_object() || !model.contains("id") || !model["id"].is_string()) {
      throw std::runtime_error("/v1/models: an entry without a string id: " + text_excerpt(model.dump()));
    }
    info.models.push_back(model["id"].get<std::string>());
    if (info.kind == ServerKind::Unknown && model.contains("owned_by") && model["owned_by"].is_string()) {
      info.kind = kind_from_owner(model["owned_by"].get<std::string>());
      if (info.kind != ServerKind::Unknown) info.detected_by = "/v1/models";
    }
    if (!info.context_length && model.contains("max_model_len") && model["max_model_len"].is_number_integer()) {
      info.context_length = model["max_model_len"].get<int64_t>();
    }
  }
  return info;
}

bool read_llama_props(std::string_view body, ServerInfo& info) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("total_slots") || !j["total_slots"].is_number_integer()) return false;
  if (info.kind == ServerKind::Unknown) {
    info.kind = ServerKind::LlamaCpp;
    info.detected_by = "/props";
  }
  info.slot_count = j["total_slots"].get<int64_t>();
  const auto settings = j.find("default_generation_settings");
  if (settings != j.end() && settings->is_object() && settings->contains("n_ctx") && (*settings)["n_ctx"].is_number_integer()) {
    info.context_length = (*settings)["n_ctx"].get<int64_t>();
  }
  if (j.contains("build_info") && j["build_info"].is_string()) info.build = j["build_info"].get<std::string>();
  return true;
}

ServerKind kind_from_metrics(const MetricSnapshot& metrics) {
  for (const MetricFamily& family : metrics.families()) {
    for (const auto& [prefix, kind] : {std::pair{"vllm:", ServerKind::Vllm}, std::pair{"sglang:", ServerKind::Sglang},
                                       std::pair{"llamacpp:", ServerKind::LlamaCpp}}) {
      if (family.name.starts_with(prefix)) return kind;
    }
  }
  return ServerKind::Unknown;
}

ServerInfo probe_server(const RemoteEndpoint& endpoint, double timeout_s, const std::atomic<bool>* cancel) {
  ServerInfo info = read_models_list(get(endpoint, "/v1/models", timeout_s, cancel).body);
  // /props exists on llama-server only; other servers answer 404, which tells nothing.
  if (info.kind == ServerKind::Unknown || info.kind == ServerKind::LlamaCpp) {
    try {
      read_llama_props(get(endpoint, "/props", timeout_s, cancel).body, info);
    } catch (const HttpError& e) {  // not llama-server: the kind stays as /v1/models said
      if (e.failure() == HttpFailure::Cancelled) throw;
    }
  }
  // /metrics tells the kind when nothing else did, and the releases whose metric names it fits.
  try {
    const MetricSnapshot metrics = MetricSnapshot::parse(get(endpoint, "/metrics", timeout_s, cancel).body);
    if (info.kind == ServerKind::Unknown) {
      info.kind = kind_from_metrics(metrics);
      if (info.kind != ServerKind::Unknown) info.detected_by = "/metrics";
    }
    if (info.kind != ServerKind::Unknown && info.kind != ServerKind::Inferscope) {
      const ReleaseMatch match = match_release(metrics, info.kind);
      info.metrics_release = release_range_text(info.kind, match);
      info.metrics_unpublished = unpublished_text(match);
    }
  } catch (const HttpError& e) {  // no /metrics (llama-server without --metrics): nothing more to tell
    if (e.failure() == HttpFailure::Cancelled) throw;
  } catch (const std::exception&) {  // not Prometheus text: nothing more to tell
  }
  return info;
}

}  // namespace inferscope
