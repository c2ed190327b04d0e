// The GUI's one handle on the engine (docs/ARCHITECTURE.md §4). It owns the loaded model and the Engine,
// loads models and builds or destroys engines on a background worker, forwards submit/cancel/
// set_config, and re-emits the engine thread's callbacks as signals on the GUI thread (queued). A
// QTimer pulls metrics_snapshot() (cheap) and asks the worker for kv_snapshot() (which may wait one
// engine step), so the GUI thread never blocks on a step. Before anything else, the worker measures
// the machine's roofs once per process (machine_measure.h) and machine_measured reports them.
//
// Request ids here are the bridge's own, unique across engines: a new model or a new thread count
// builds a new Engine whose ids start again at 0, and the old engine's last callbacks (its aborted
// requests) still reach the right session.
//
// Serving: start_serving() puts the local engine behind the OpenAI-compatible server
// (core/server/background_server.h) while the chat goes on. Each engine reports through a
// CallbackRouter, so the clients' requests never reach the bridge's signals, yet the dashboards and
// the block table show them (they are the engine's). Servers are built and destroyed on the worker,
// in order, so a new engine is served on the same address once the old server has let it go.
#pragma once
#include <QObject>
#include <QString>
#include <QTimer>
#include <atomic>
#include <deque>
#include <map>
#include <memory>

#include "core/engine/engine.h"
#include "core/model/llama_model.h"
#include "core/engine/callback_router.h"
#include "core/remote/remote_engine.h"
#include "core/server/background_server.h"
#include "core/spec/verifier.h"
#include "gui/bridge/background_worker.h"
#include "gui/bridge/machine_measure.h"

namespace inferscope::gui {

class EngineBridge : public QObject {
  Q_OBJECT
 public:
  explicit EngineBridge(EngineConfig config, QObject* parent = nullptr);
  ~EngineBridge() override;

  // Starts loading on the worker; model_loaded or model_failed follows. The current model keeps
  // serving until the new one is ready (then its requests end as aborted).
  void load_model(const QString& path);
  bool loading() const { return loading_; }
  bool has_engine() const { return engine_ != nullptr; }
  // Chat and dashboards go to a remote server (RemoteEngine) instead of a local engine: the local
  // engine and model are let go (their requests end as aborted) and engine_replaced, then
  // remote_connected follow. Loading a model later goes back to a local engine.
  void connect_remote(const RemoteEndpoint& endpoint, const ServerInfo& server);
  bool remote() const { return remote_engine() != nullptr; }
  // "llama.cpp at http://host:8080", or "" for the local engine; remote_model() the model it serves.
  QString remote_source() const;
  QString remote_model() const;
  // The KV pool the server states (vLLM's block size and block count), when connected to one that does.
  std::optional<ServerKvPool> remote_kv_pool() const;
  // Whether the block table and every metric are an engine's own: the local engine's, or another
  // Inferscope's followed over HTTP (RemoteEngine::follows_engine); false for other servers.
  bool engine_internals() const;
  // llama-server's slots (empty for other servers and the local engine).
  std::vector<ServerSlot> remote_slots() const;
  // True while loading or rebuilding: a request sent now would be aborted by the switch.
  bool busy() const { return loading_ || rebuilding_; }
  const LlamaModel* model() const { return model_.get(); }
  // The model shared: a holder (a comparison run) keeps it alive past a switch to another model.
  std::shared_ptr<const LlamaModel> shared_model() const { return model_; }
  QString model_path() const { return model_path_; }
  // The configuration last asked for (threads included); resolved against the model when one is loaded.
  EngineConfig config() const;
  // KV, scheduler and speculation settings go to the running engine (applied between steps;
  // config_result says how). A config the engine refuses changes nothing: once every config sent
  // is answered, config() is again the last one it took. A different thread count builds a new
  // engine once no request is in flight.
  void set_config(const EngineConfig& config);

  // Returns the bridge's request id, or -1 (with request_failed emitted) when no model is loaded.
  int submit(EngineRequest request);
  void cancel(int request);
  int in_flight() const { return static_cast<int>(requests_.size()); }

  // Serves the local engine over HTTP with `options` (its model name and context are the loaded
  // model's), replacing any server running: serving_changed follows once it listens, or says why
  // it cannot. Serving goes on over a new engine (another model, another thread count) and stops on
  // a switch to a remote server.
  void start_serving(const ServeOptions& options);
  // Stops accepting and cancels the clients' requests in flight (serving_changed follows).
  void stop_serving();
  // Whether serving is asked for, and where it listens ("" while starting or stopped).
  bool serving() const { return serve_options_.has_value(); }
  QString serving_url() const { return serving_url_; }
  // The clients' requests: in flight now, and submitted since start_serving().
  GuestCounts served_counts() const;
  // The bridge request that owns a KV-cache sequence of the current engine, or -1 (always on a
  // server: its sequences are numbered by the server, not by our requests).
  int request_of_sequence(int32_t sequence) const;
  // The KV-cache sequence of a bridge request in flight on the current engine, or -1 (always on a server).
  int32_t sequence_of_request(int request) const;
  // Tokens in `messages` rendered with the model's chat template (0 without a model).
  int count_chat_tokens(const std::vector<ChatMessage>& messages) const;
  // Refresh rate of the metrics and KV snapshots (default 200 ms).
  void set_poll_interval_ms(int ms) { poll_.setInterval(ms); }

 signals:
  void model_loading(const QString& path);
  void model_loaded(const QString& path);
  void model_failed(const QString& path, const QString& message);
  // The chat and dashboards now run on the remote server `source` ("vLLM at http://…").
  void remote_connected(const QString& source);
  // A new engine replaced the old one (new model or thread count): metrics start again.
  void engine_replaced();
  // A speculative step of `request` was verified: how its next tokens came about (before their
  // token signals); refused_piece is the refused draft's text (empty when every draft passed).
  void verified(int request, const inferscope::Verification& verification, const QString& refused_piece);
  void token(int request, const QString& piece, int token_id, double since_arrival_s, double time_s);
  void request_failed(int request, const QString& message);
  // A remote server's reasoning text for `request`, shown apart from the reply.
  void reasoning(int request, const QString& piece);
  // A remote server's token counts for `request` (its usage report), before finished.
  void usage_reported(int request, int prompt_tokens, int generation_tokens);
  // Exactly once per submitted request, last; reason is vLLM's "stop" | "length" | "abort" | "error".
  void finished(int request, const QString& reason);
  void config_result(bool applied, const QString& message);
  // The server listens at `url` ("http://127.0.0.1:8080"), or no longer ("" url); `error` says why
  // it could not start (the port in use, ...). Connecting to a remote server stops serving.
  void serving_changed(const QString& url, const QString& error);
  // The engine changed its configuration (a toggle applied, converted weights swapped in, a new
  // engine for a new thread count) at `time_s` seconds after it started; `message` says what.
  void config_applied(double time_s, const QString& message);
  // The machine's peak FLOP/s and read bandwidth (bytes/s), measured once per process; it comes
  // before the first model_loaded.
  void machine_measured(double peak_flops_per_second, double read_bytes_per_second);
  void metrics_updated(const inferscope::EngineMetricsSnapshot& snapshot);
  void kv_updated(const inferscope::KvSnapshot& snapshot);

 private:
  struct Key {
    uint64_t generation;
    RequestId id;
    auto operator<=>(const Key&) const = default;
  };
  // The engine's callbacks, posted to the GUI thread; `model` decodes refused drafts.
  EngineCallbacks callbacks_for(uint64_t generation, std::shared_ptr<const LlamaModel> model);
  // Runs fn on the GUI thread later (dropped once the bridge is closing).
  void post_to_gui(std::function<void()> fn);
  // Builds an engine for `model` on the worker, then installs it on the GUI thread.
  void build_engine(std::shared_ptr<const LlamaModel> model, const QString& path, bool new_model);
  // The engine when it is a server's (its slots and KV pool), else null.
  const RemoteEngine* remote_engine() const { return dynamic_cast<const RemoteEngine*>(engine_.get()); }
  void install(std::shared_ptr<const LlamaModel> model, std::shared_ptr<Engine> engine,
               std::shared_ptr<CallbackRouter> router, uint64_t generation, const QString& path, bool new_model);
  // Builds a server for the current engine on the worker (after any server retired before it).
  void launch_server();
  // Lets the current server go (destroyed on the worker); its clients' requests end as aborted.
  void retire_server();
  // A new engine once nothing is in flight, the clients' requests included, when one is pending.
  void rebuild_when_idle();
  // Destroying an engine joins its threads: done on the worker, never on the GUI thread.
  template <typename E>
  void retire(std::shared_ptr<E> engine) {
    if (engine) worker_.post([engine = std::move(engine)]() mutable { engine.reset(); });
  }
  // A new engine (local or remote) takes over as `generation`: bookkeeping of the old one is reset.
  void start_generation(uint64_t generation);
  bool requests_in_flight() const;
  void on_finished(Key key, StopReason reason);
  // Pairs an engine answer with the oldest config sent (answers come in order) and, when the last
  // one sent was refused, goes back to the config the engine runs.
  void settle_config(bool applied);
  void poll();
  // Asks the worker for the engine's block table (kv_updated follows), unless a request is pending.
  void request_kv_snapshot();

  EngineConfig config_;
  EngineConfig accepted_;              // the config the current engine runs, as far as its answers tell
  std::deque<EngineConfig> sent_;      // configs sent to it and not answered yet, oldest first
  std::shared_ptr<const LlamaModel> model_;
  std::shared_ptr<InferenceEngine> engine_;  // the local engine or a server
  std::shared_ptr<CallbackRouter> router_;   // the local engine's (null for a server)
  std::optional<ServeOptions> serve_options_;  // set while serving is asked for
  std::shared_ptr<BackgroundServer> server_;   // the server on the current engine, once it listens
  QString serving_url_;
  uint64_t serve_ticket_ = 0;          // a server built for an older ticket is let go on arrival
  int64_t served_before_ = 0;          // clients' requests submitted to earlier engines since start_serving
  QString model_path_;
  uint64_t generation_ = 0, next_generation_ = 1;
  bool loading_ = false, rebuilding_ = false, rebuild_pending_ = false;
  bool snapshot_pending_ = false, kv_dirty_ = true;
  int64_t last_steps_ = -1, last_finished_ = -1;
  std::string last_weights_;           // level / converting to / progress, as last reported
  int next_request_ = 1;
  std::map<Key, int> requests_;        // in flight: engine (generation, id) -> bridge id
  std::map<int, Key> keys_;            // and back
  QTimer poll_;
  std::atomic<bool> closing_{false};
  BackgroundWorker worker_;            // last: joined first, while everything above still exists
};

}  // namespace inferscope::gui
