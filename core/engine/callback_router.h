// One engine, two front ends: the workbench's chat (the host, which built the engine) and a server
// started beside it (the guest). The engine is built with callbacks(); each request's events go to
// the front end that submitted it, the host's by default. The guest submits through the view that
// attach_guest() returns, which registers each request under the router's lock before the engine can
// report on it, so no event of a guest's request ever reaches the host. The guest's callbacks run
// under that lock: once detach_guest() returns they are never called again, and whatever the guest's
// requests still report (their ends, after a server's cancels) is dropped.
#pragma once
#include <memory>

#include "core/engine/inference_engine.h"

namespace inferscope {

struct GuestCounts {
  int32_t in_flight = 0;  // submitted and not ended (a detached guest's included, until they end)
  int64_t submitted = 0;  // since the router was built
};

class CallbackRouter {
 public:
  explicit CallbackRouter(EngineCallbacks host);

  // What to build the engine with; they keep the router's state alive as long as the engine holds them.
  EngineCallbacks callbacks() const;
  // A view of `engine` (built with callbacks()) whose requests report to `guest`: submit, cancel (its
  // own requests only), the metrics and the block table; set_config() is refused (false), for the
  // configuration is the host's. Replaces any guest attached before.
  std::unique_ptr<InferenceEngine> attach_guest(InferenceEngine& engine, EngineCallbacks guest);
  void detach_guest();
  GuestCounts guest_counts() const;

  struct State;  // shared by the callbacks and the guest's view

 private:
  std::shared_ptr<State> state_;
};

}  // namespace inferscope
