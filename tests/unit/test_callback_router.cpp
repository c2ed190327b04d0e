// CallbackRouter: one engine's events sorted between the front end that built it (the host) and a
// server beside it (the guest), against an engine whose events the test sends itself.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/callback_router.h"

namespace inferscope {
namespace {

// Numbers requests as the Engine does; each submit may send one token from another thread before it returns.
class ScriptedEngine final : public InferenceEngine {
 public:
  explicit ScriptedEngine(EngineCallbacks cb) : cb_(std::move(cb)) {}
  RequestId submit(EngineRequest) override {
    const RequestId id = next_++;
    if (early_token_) {
      // The Engine's thread may report on a request before submit() returns to its caller.
      early_ = std::async(std::launch::async, [this, id] { cb_.on_token(id, "early", 1, {}); });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return id;
  }
  void cancel(RequestId id) override { cancelled.push_back(id); }
  EngineMetricsSnapshot metrics_snapshot() const override { return {}; }
  std::string source() const override { return {}; }
  bool set_config(EngineConfig) override { return true; }
  std::optional<KvSnapshot> kv_snapshot() override { return KvSnapshot{}; }

  void token(RequestId id) { cb_.on_token(id, "t", 1, {}); }
  void finish(RequestId id) { cb_.on_finished(id, StopReason::Length); }
  void config() { cb_.on_config(true, "changed"); }
  void wait_early() {
    if (early_.valid()) early_.get();
  }

  bool early_token_ = false;
  std::vector<RequestId> cancelled;

 private:
  EngineCallbacks cb_;
  RequestId next_ = 0;
  std::future<void> early_;
};

// What one front end's callbacks received: "token 3", "finished 3", "config".
struct Log {
  std::mutex mu;
  std::vector<std::string> events;
  EngineCallbacks callbacks() {
    EngineCallbacks cb;
    cb.on_token = [this](RequestId id, std::string_view, TokenId, const TokenTiming&) { add("token " + std::to_string(id)); };
    cb.on_finished = [this](RequestId id, StopReason) { add("finished " + std::to_string(id)); };
    cb.on_config = [this](bool, const std::string&) { add("config"); };
    return cb;
  }
  void add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
};

// The chat's log, the server's, and the engine they share (`served`: the server's view of it).
struct CallbackRouting : ::testing::Test {
  Log host, guest;
  CallbackRouter router{host.callbacks()};
  ScriptedEngine engine{router.callbacks()};
  const std::unique_ptr<InferenceEngine> served = router.attach_guest(engine, guest.callbacks());
};

TEST_F(CallbackRouting, EachRequestReportsToTheFrontEndThatSubmittedIt) {
  const RequestId chat = engine.submit({});
  const RequestId client = served->submit({});
  engine.token(chat);
  engine.token(client);
  engine.config();
  EXPECT_EQ(router.guest_counts().in_flight, 1);
  engine.finish(client);
  engine.finish(chat);
  EXPECT_EQ(host.events, (std::vector<std::string>{"token 0", "config", "finished 0"})) << "the configuration is the host's";
  EXPECT_EQ(guest.events, (std::vector<std::string>{"token 1", "finished 1"}));
  EXPECT_EQ(router.guest_counts().in_flight, 0);
  EXPECT_EQ(router.guest_counts().submitted, 1);
  EXPECT_FALSE(served->set_config({})) << "a server does not set the workbench's configuration";
}

TEST_F(CallbackRouting, AnEventBeforeSubmitReturnsReachesTheGuest) {
  engine.early_token_ = true;
  const RequestId id = served->submit({});
  engine.wait_early();
  EXPECT_TRUE(host.events.empty());
  EXPECT_EQ(guest.events, std::vector<std::string>{"token " + std::to_string(id)});
}

TEST_F(CallbackRouting, ADetachedGuestHearsNothingAndTheHostNothingOfIt) {
  const RequestId id = served->submit({});
  router.detach_guest();
  EXPECT_EQ(router.guest_counts().in_flight, 1) << "still running until the engine ends it";
  engine.token(id);
  engine.finish(id);
  EXPECT_TRUE(host.events.empty());
  EXPECT_TRUE(guest.events.empty());
  EXPECT_EQ(router.guest_counts().in_flight, 0);
}

TEST_F(CallbackRouting, TheGuestCancelsOnlyItsOwnRequests) {
  const RequestId chat = engine.submit({});
  const RequestId client = served->submit({});
  served->cancel(chat);
  served->cancel(client);
  EXPECT_EQ(engine.cancelled, std::vector<RequestId>{client});
}

}  // namespace
}  // namespace inferscope
