#include "gui/bridge/engine_bridge.h"

#include <algorithm>

#include "core/common/text_format.h"
#include "core/engine/prompt.h"
#include "core/engine/setting_table.h"

namespace inferscope::gui {
namespace {

// The settings an engine is built with, as "threads 2, operator fusion on, ...".
std::string build_settings_text(const EngineConfig& c) {
  std::vector<std::string> parts;
  for (const EngineSetting& s : engine_settings()) {
    if (s.timing == SettingTiming::Build) parts.push_back(setting_text(s, c));
  }
  return join(parts);
}

bool build_settings_differ(const EngineConfig& a, const EngineConfig& b) {
  const std::vector<const EngineSetting*> changed = changed_settings(a, b);
  return std::any_of(changed.begin(), changed.end(), [](const EngineSetting* s) { return s->timing == SettingTiming::Build; });
}

// The engine keeps a reference to its model: the deleter holds the model until the engine is gone.
std::shared_ptr<Engine> make_engine(std::shared_ptr<const LlamaModel> model, const EngineConfig& config,
                                    EngineCallbacks callbacks) {
  Engine* engine = new Engine(*model, config, std::move(callbacks));
  return std::shared_ptr<Engine>(engine, [model](Engine* e) { delete e; });
}

}  // namespace

EngineBridge::EngineBridge(EngineConfig config, QObject* parent) : QObject(parent), config_(std::move(config)) {
  poll_.setInterval(200);
  connect(&poll_, &QTimer::timeout, this, &EngineBridge::poll);
  poll_.start();
  // The worker's first job: jobs run in order, so the roofs are measured before any model loads.
  worker_.post([this, threads = config_.threads] {
    const MachineMeasurement m = measure_machine_once(threads);
    post_to_gui([this, m] { emit machine_measured(m.peak_flops_per_second, m.read_bytes_per_second); });
  });
}

EngineBridge::~EngineBridge() {
  closing_ = true;
  poll_.stop();
  retire(std::move(server_));  // first: it holds the engine, and cancels its clients' requests on it
  retire(std::move(engine_));  // the worker's destructor runs these jobs and joins
}

EngineConfig EngineBridge::config() const {
  if (!model_) return config_;
  EngineConfig resolved = resolve_config(config_, *model_);
  resolved.threads = config_.threads;
  return resolved;
}

void EngineBridge::post_to_gui(std::function<void()> fn) {
  if (!closing_) QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

EngineCallbacks EngineBridge::callbacks_for(uint64_t generation, std::shared_ptr<const LlamaModel> model) {
  EngineCallbacks cb;
  cb.on_verify = [this, generation, model](RequestId id, const Verification& v) {
    // Decoded here, by the model that drafted it (render_special: a refused end token still shows).
    const QString refused = v.rejected ? QString::fromStdString(model->tokenizer().token_to_piece(v.refused.id, true)) : QString();
    post_to_gui([this, key = Key{generation, id}, v, refused] {
      auto it = requests_.find(key);
      if (it != requests_.end()) emit verified(it->second, v, refused);
    });
  };
  cb.on_token = [this, generation](RequestId id, std::string_view piece, TokenId token, const TokenTiming& t) {
    post_to_gui([this, key = Key{generation, id}, text = QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size())),
                 token, t] {
      auto it = requests_.find(key);
      if (it == requests_.end()) return;
      kv_dirty_ = true;
      emit this->token(it->second, text, token, t.since_arrival_s, t.time_s);
    });
  };
  cb.on_reasoning = [this, generation](RequestId id, std::string_view piece) {
    post_to_gui([this, key = Key{generation, id}, text = QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()))] {
      auto it = requests_.find(key);
      if (it != requests_.end()) emit reasoning(it->second, text);
    });
  };
  cb.on_usage = [this, generation](RequestId id, int32_t prompt, int32_t generated) {
    post_to_gui([this, key = Key{generation, id}, prompt, generated] {
      auto it = requests_.find(key);
      if (it != requests_.end()) emit usage_reported(it->second, prompt, generated);
    });
  };
  cb.on_error = [this, generation](RequestId id, const std::string& message) {
    post_to_gui([this, key = Key{generation, id}, text = QString::fromStdString(message)] {
      auto it = requests_.find(key);
      if (it != requests_.end()) emit request_failed(it->second, text);
    });
  };
  cb.on_finished = [this, generation](RequestId id, StopReason reason) {
    post_to_gui([this, key = Key{generation, id}, reason] { on_finished(key, reason); });
  };
  cb.on_config = [this, generation](bool applied, const std::string& message) {
    post_to_gui([this, generation, applied, text = QString::fromStdString(message)] {
      if (generation != generation_) return;
      kv_dirty_ = true;
      settle_config(applied);
      emit config_result(applied, text);
      if (applied && text != "no change") emit config_applied(engine_->metrics_snapshot().uptime_s, text);
    });
  };
  return cb;
}

void EngineBridge::load_model(const QString& path) {
  if (loading_) return;
  loading_ = true;
  emit model_loading(path);
  const std::string file = path.toStdString();
  worker_.post([this, file, path] {
    std::shared_ptr<const LlamaModel> model;
    try {
      model = LlamaModel::load(file);
    } catch (const std::exception& e) {
      post_to_gui([this, path, text = QString::fromStdString(e.what())] {
        loading_ = false;
        emit model_failed(path, text);
      });
      return;
    }
    post_to_gui([this, model, path] { build_engine(model, path, true); });
  });
}

void EngineBridge::build_engine(std::shared_ptr<const LlamaModel> model, const QString& path, bool new_model) {
  const uint64_t generation = next_generation_++;
  auto router = std::make_shared<CallbackRouter>(callbacks_for(generation, model));
  worker_.post([this, model, path, new_model, generation, config = config_, router] {
    try {
      std::shared_ptr<Engine> engine = make_engine(model, config, router->callbacks());
      post_to_gui([this, model, engine, router, generation, path, new_model] {
        install(model, engine, router, generation, path, new_model);
      });
    } catch (const std::exception& e) {
      post_to_gui([this, path, new_model, text = QString::fromStdString(e.what())] {
        loading_ = rebuilding_ = false;
        if (new_model) {
          emit model_failed(path, "cannot start the engine: " + text);
        } else {
          emit config_result(false, "engine not rebuilt: " + text);
        }
      });
    }
  });
}

void EngineBridge::start_generation(uint64_t generation) {
  retire_server();
  if (router_) served_before_ += router_->guest_counts().submitted;
  router_.reset();
  retire(std::move(engine_));
  generation_ = generation;
  accepted_ = config_;
  sent_.clear();
  last_steps_ = last_finished_ = -1;
  last_weights_.clear();
  kv_dirty_ = true;
}

void EngineBridge::install(std::shared_ptr<const LlamaModel> model, std::shared_ptr<Engine> engine,
                           std::shared_ptr<CallbackRouter> router, uint64_t generation, const QString& path, bool new_model) {
  start_generation(generation);
  model_ = std::move(model);
  engine_ = std::move(engine);
  router_ = std::move(router);
  model_path_ = path;
  loading_ = rebuilding_ = false;
  emit engine_replaced();
  if (serve_options_) launch_server();
  if (new_model) {
    emit model_loaded(path);
  } else {
    const QString message = QString::fromStdString("new engine with " + build_settings_text(config_));
    emit config_result(true, message);
    emit config_applied(0, message);
  }
}

void EngineBridge::connect_remote(const RemoteEndpoint& endpoint, const ServerInfo& server) {
  const uint64_t generation = next_generation_++;
  auto remote = std::make_shared<RemoteEngine>(endpoint, server, callbacks_for(generation, nullptr));
  start_generation(generation);
  model_.reset();
  model_path_.clear();
  engine_ = std::move(remote);
  emit engine_replaced();
  const bool was_serving = serve_options_.has_value();
  serve_options_.reset();  // before remote_connected: serving() is false by then
  emit remote_connected(remote_source());
  if (was_serving) emit serving_changed({}, {});
}

void EngineBridge::start_serving(const ServeOptions& options) {
  if (!router_) {
    const QString why = remote() ? "serving needs a local model: the workbench runs on " + remote_source() : "open a model to serve it";
    QMetaObject::invokeMethod(this, [this, why] { emit serving_changed({}, why); }, Qt::QueuedConnection);
    return;
  }
  retire_server();
  serve_options_ = options;
  served_before_ = -router_->guest_counts().submitted;  // counted from now
  launch_server();
}

void EngineBridge::stop_serving() {
  if (!serve_options_) return;
  serve_options_.reset();
  retire_server();
  emit serving_changed({}, {});
}

GuestCounts EngineBridge::served_counts() const {
  GuestCounts counts = router_ ? router_->guest_counts() : GuestCounts{};
  counts.submitted += served_before_;
  return counts;
}

void EngineBridge::launch_server() {
  if (!router_ || !model_) return;
  ServeOptions options = *serve_options_;
  options.context_length = config().context_length;
  const uint64_t ticket = ++serve_ticket_;
  worker_.post([this, ticket, model = model_, engine = engine_, router = router_, options] {
    try {
      auto server = std::make_shared<BackgroundServer>(model, engine, router, options);
      post_to_gui([this, ticket, server]() mutable {
        if (ticket != serve_ticket_) return retire(std::move(server));  // stopped, or another engine, meanwhile
        server_ = std::move(server);
        serve_options_->port = server_->port();  // a free port, once found, is kept for the next engine
        serving_url_ = QString::fromStdString(server_->url());
        emit serving_changed(serving_url_, {});
      });
    } catch (const std::exception& e) {
      post_to_gui([this, ticket, text = QString::fromStdString(e.what())] {
        if (ticket != serve_ticket_) return;
        serve_options_.reset();
        emit serving_changed({}, "cannot serve: " + text);
      });
    }
  });
}

void EngineBridge::retire_server() {
  ++serve_ticket_;
  retire(std::move(server_));
  serving_url_.clear();
}

QString EngineBridge::remote_source() const { return engine_ ? QString::fromStdString(engine_->source()) : QString(); }

std::optional<ServerKvPool> EngineBridge::remote_kv_pool() const {
  const RemoteEngine* remote = remote_engine();
  return remote ? remote->kv_pool() : std::nullopt;
}

bool EngineBridge::engine_internals() const {
  const RemoteEngine* remote = remote_engine();
  return remote == nullptr || remote->follows_engine();
}

std::vector<ServerSlot> EngineBridge::remote_slots() const {
  const RemoteEngine* remote = remote_engine();
  return remote ? remote->slot_states() : std::vector<ServerSlot>{};
}

QString EngineBridge::remote_model() const {
  const RemoteEngine* remote = remote_engine();
  return remote ? QString::fromStdString(remote->endpoint().model) : QString();
}

void EngineBridge::set_config(const EngineConfig& config) {
  if (engine_ && !engine_->set_config(config)) {
    QMetaObject::invokeMethod(this, [this] {
      emit config_result(false, remote_source() + " runs its own configuration: the toggles apply to a local model");
    }, Qt::QueuedConnection);
    return;
  }
  // Some settings are fixed when an engine is built: they need a new one.
  const bool rebuild = build_settings_differ(config, config_);
  config_ = config;
  if (!engine_) return;
  sent_.push_back(config);
  if (!rebuild) return;
  if (!requests_in_flight() && !busy()) {
    rebuilding_ = true;
    build_engine(model_, model_path_, false);
  } else {
    rebuild_pending_ = true;
    emit config_result(true, QString::fromStdString(build_setting_names() + " apply once the running requests finish"));
  }
}

int EngineBridge::submit(EngineRequest request) {
  const int id = next_request_++;
  if (!has_engine()) {
    QMetaObject::invokeMethod(this, [this, id] {
      emit request_failed(id, "no model is loaded");
      emit finished(id, "error");
    }, Qt::QueuedConnection);
    return id;
  }
  const Key key{generation_, engine_->submit(std::move(request))};
  requests_[key] = id;
  keys_[id] = key;
  kv_dirty_ = true;
  return id;
}

void EngineBridge::cancel(int request) {
  auto it = keys_.find(request);
  if (it == keys_.end() || it->second.generation != generation_) return;
  if (engine_) engine_->cancel(it->second.id);
}

int EngineBridge::request_of_sequence(int32_t sequence) const {
  if (remote()) return -1;
  auto it = requests_.find(Key{generation_, sequence});
  return it == requests_.end() ? -1 : it->second;
}

int32_t EngineBridge::sequence_of_request(int request) const {
  if (remote()) return -1;
  auto it = keys_.find(request);
  return it != keys_.end() && it->second.generation == generation_ ? it->second.id : -1;
}

int EngineBridge::count_chat_tokens(const std::vector<ChatMessage>& messages) const {
  if (!model_ || messages.empty()) return 0;
  return static_cast<int>(encode_chat(*model_, messages).size());
}

void EngineBridge::on_finished(Key key, StopReason reason) {
  auto it = requests_.find(key);
  if (it == requests_.end()) return;
  const int id = it->second;
  requests_.erase(it);
  keys_.erase(id);
  kv_dirty_ = true;
  emit finished(id, stop_reason_name(reason));
  rebuild_when_idle();
}

bool EngineBridge::requests_in_flight() const {
  return in_flight() > 0 || (router_ && router_->guest_counts().in_flight > 0);
}

void EngineBridge::rebuild_when_idle() {
  if (!rebuild_pending_ || requests_in_flight() || busy() || !model_) return;
  rebuild_pending_ = false;
  rebuilding_ = true;
  build_engine(model_, model_path_, false);
}

void EngineBridge::settle_config(bool applied) {
  // An answer with none pending was nobody's request: a background weight conversion ended, or a
  // failed device sent the engine to the CPU (the device to ask for from now on).
  if (sent_.empty()) {
    if (const auto device = compute_device_from_name(engine_->metrics_snapshot().device)) {
      config_.device = accepted_.device = *device;
    }
    return;
  }
  EngineConfig answered = std::move(sent_.front());
  sent_.pop_front();
  if (applied) {
    accepted_ = std::move(answered);
  } else if (sent_.empty()) {
    // The settings fixed at build never reach the engine's config: they stay as asked.
    const EngineConfig asked = config_;
    config_ = accepted_;
    for (const EngineSetting& s : engine_settings()) {
      if (s.timing == SettingTiming::Build) s.set(config_, s.get(asked));
    }
  }
}

void EngineBridge::poll() {
  if (!engine_) return;
  if (remote()) {
    // A server's metrics and block table change without our requests (other clients): every poll is news.
    emit metrics_updated(engine_->metrics_snapshot());
    if (engine_internals()) request_kv_snapshot();
    return;
  }
  rebuild_when_idle();  // the clients' requests end without a signal here
  EngineMetricsSnapshot m = engine_->metrics_snapshot();
  // The weights change without a step too: a background conversion progresses or swaps in while idle.
  const std::string weights = m.weights_quant + "/" + m.converting_to + "/" + std::to_string(m.conversion_progress);
  const bool moved = m.num_steps != last_steps_ || m.requests_finished != last_finished_;
  if (moved || weights != last_weights_) {
    last_steps_ = m.num_steps;
    last_finished_ = m.requests_finished;
    last_weights_ = weights;
    emit metrics_updated(m);
  }
  if (moved || kv_dirty_) request_kv_snapshot();
}

void EngineBridge::request_kv_snapshot() {
  if (snapshot_pending_) return;
  snapshot_pending_ = true;
  kv_dirty_ = false;
  worker_.post([this, engine = engine_, generation = generation_] {
    std::optional<KvSnapshot> snapshot = engine->kv_snapshot();
    post_to_gui([this, generation, snapshot = std::move(snapshot)] {
      snapshot_pending_ = false;
      if (generation == generation_ && snapshot) emit kv_updated(*snapshot);
    });
  });
}

}  // namespace inferscope::gui
