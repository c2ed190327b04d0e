#include "core/engine/callback_router.h"

#include <mutex>
#include <set>

namespace inferscope {

struct CallbackRouter::State {
  explicit State(EngineCallbacks h) : host(std::move(h)) {}
  const EngineCallbacks host;

  mutable std::mutex mu;
  EngineCallbacks guest;         // empty once detached
  std::set<RequestId> guest_ids; // the guest's requests not ended yet
  int64_t submitted = 0;

  // Calls the guest's `member` when `id` is the guest's (under mu; nothing while detached), else the host's.
  template <typename Member, typename... Args>
  void route(RequestId id, Member member, Args&&... args) {
    {
      std::lock_guard lock(mu);
      if (guest_ids.contains(id)) {
        if (guest.*member) (guest.*member)(id, std::forward<Args>(args)...);
        return;
      }
    }
    if (host.*member) (host.*member)(id, std::forward<Args>(args)...);
  }
};

namespace {

class GuestView final : public InferenceEngine {
 public:
  GuestView(std::shared_ptr<CallbackRouter::State> state, InferenceEngine& engine)
      : state_(std::move(state)), engine_(engine) {}

  RequestId submit(EngineRequest request) override {
    // Held across submit: the engine's first event for the id waits until it is known as the guest's.
    std::lock_guard lock(state_->mu);
    const RequestId id = engine_.submit(std::move(request));
    state_->guest_ids.insert(id);
    ++state_->submitted;
    return id;
  }
  void cancel(RequestId id) override {
    {
      std::lock_guard lock(state_->mu);
      if (!state_->guest_ids.contains(id)) return;
    }
    engine_.cancel(id);
  }
  EngineMetricsSnapshot metrics_snapshot() const override { return engine_.metrics_snapshot(); }
  std::string source() const override { return engine_.source(); }
  bool set_config(EngineConfig) override { return false; }
  std::optional<KvSnapshot> kv_snapshot() override { return engine_.kv_snapshot(); }

 private:
  std::shared_ptr<CallbackRouter::State> state_;
  InferenceEngine& engine_;
};

}  // namespace

CallbackRouter::CallbackRouter(EngineCallbacks host) : state_(std::make_shared<State>(std::move(host))) {}

EngineCallbacks CallbackRouter::callbacks() const {
  const std::shared_ptr<State> s = state_;
  EngineCallbacks cb;
  cb.on_token = [s](RequestId id, std::string_view piece, TokenId token, const TokenTiming& t) {
    s->route(id, &EngineCallbacks::on_token, piece, token, t);
  };
  cb.on_reasoning = [s](RequestId id, std::string_view piece) { s->route(id, &EngineCallbacks::on_reasoning, piece); };
  cb.on_usage = [s](RequestId id, int32_t prompt, int32_t generated) {
    s->route(id, &EngineCallbacks::on_usage, prompt, generated);
  };
  cb.on_server_timings = [s](RequestId id, const ServerTimings& t) { s->route(id, &EngineCallbacks::on_server_timings, t); };
  cb.on_error = [s](RequestId id, const std::string& message) { s->route(id, &EngineCallbacks::on_error, message); };
  cb.on_logits = [s](RequestId id, int32_t position, std::span<const float> logits) {
    s->route(id, &EngineCallbacks::on_logits, position, logits);
  };
  cb.on_verify = [s](RequestId id, const Verification& v) { s->route(id, &EngineCallbacks::on_verify, v); };
  cb.on_finished = [s](RequestId id, StopReason reason) {
    s->route(id, &EngineCallbacks::on_finished, reason);
    std::lock_guard lock(s->mu);
    s->guest_ids.erase(id);
  };
  // The configuration is the host's: so are the answers.
  cb.on_config = s->host.on_config;
  return cb;
}

std::unique_ptr<InferenceEngine> CallbackRouter::attach_guest(InferenceEngine& engine, EngineCallbacks guest) {
  std::lock_guard lock(state_->mu);
  state_->guest = std::move(guest);
  return std::make_unique<GuestView>(state_, engine);
}

void CallbackRouter::detach_guest() {
  std::lock_guard lock(state_->mu);
  state_->guest = {};
}

GuestCounts CallbackRouter::guest_counts() const {
  std::lock_guard lock(state_->mu);
  return {static_cast<int32_t>(state_->guest_ids.size()), state_->submitted};
}

}  // namespace inferscope
