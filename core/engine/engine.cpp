#include "core/engine/engine.h"

namespace inferscope {

namespace {

EngineCoreOptions with_wake(EngineCoreOptions o, std::function<void()> wake) {
  o.wake = std::move(wake);
  return o;
}

}  // namespace

Engine::Engine(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks, EngineCoreOptions options)
    : core_(model, std::move(config), std::move(callbacks), with_wake(std::move(options), [this] {
              // A finished background conversion: taking the lock first means the engine thread is
              // either before its check (and sees it) or already waiting (and gets the notify).
              { std::lock_guard lock(mu_); }
              wake_.notify_one();
            })),
      requested_config_(core_.config()),
      thread_([this] { run(); }) {}

Engine::~Engine() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

RequestId Engine::submit(EngineRequest request) {
  RequestId id;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    inbox_.submitted.emplace_back(id, std::move(request));
  }
  wake_.notify_one();
  return id;
}

void Engine::cancel(RequestId id) {
  {
    std::lock_guard lock(mu_);
    inbox_.cancelled.push_back(id);
  }
  wake_.notify_one();
}

bool Engine::set_config(EngineConfig config) {
  {
    std::lock_guard lock(mu_);
    requested_config_ = config;
    inbox_.configs.push_back(std::move(config));
  }
  wake_.notify_one();
  return true;
}

EngineConfig Engine::config() const {
  std::lock_guard lock(mu_);
  return requested_config_;
}

EngineMetricsSnapshot Engine::metrics_snapshot() const { return core_.metrics().snapshot(core_.now()); }

std::optional<KvSnapshot> Engine::kv_snapshot() {
  std::unique_lock lock(mu_);
  const uint64_t seen = snapshot_generation_;
  inbox_.snapshot = true;
  wake_.notify_one();
  snapshot_ready_.wait(lock, [&] { return snapshot_generation_ > seen || stopped_; });
  return snapshot_;
}

void Engine::run() {
  while (true) {
    Inbox in;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] {
        return stopping_ || core_.has_work() || !inbox_.submitted.empty() || !inbox_.cancelled.empty() ||
               !inbox_.configs.empty() || inbox_.snapshot;
      });
      if (stopping_) break;
      std::swap(in, inbox_);
    }
    for (const EngineConfig& c : in.configs) core_.apply_config(c);
    for (auto& [id, request] : in.submitted) core_.add(id, std::move(request));
    for (RequestId id : in.cancelled) core_.cancel(id);
    if (in.snapshot) {
      KvSnapshot snap = core_.kv_snapshot();
      std::lock_guard lock(mu_);
      snapshot_ = std::move(snap);
      ++snapshot_generation_;
      snapshot_ready_.notify_all();
    }
    const ComputeDevice device = core_.config().device;
    core_.step();
    // A failed device sent the core to the CPU: config() says so from now on.
    if (core_.config().device != device) {
      std::lock_guard lock(mu_);
      requested_config_.device = core_.config().device;
    }
  }
  // Shutting down: whatever is left ends as aborted, requests never started included.
  std::vector<std::pair<RequestId, EngineRequest>> unstarted;
  {
    std::lock_guard lock(mu_);
    unstarted = std::move(inbox_.submitted);
  }
  core_.abort_all();
  for (const auto& [id, request] : unstarted) core_.abort_unstarted(id);
  // A conversion's worker wakes this engine through mu_ when it ends: stop it while mu_ exists.
  core_.cancel_conversion();
  std::lock_guard lock(mu_);
  stopped_ = true;
  snapshot_ready_.notify_all();
}

}  // namespace inferscope
