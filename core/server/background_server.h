// An OpenAiServer serving on a thread of its own as the guest of an engine another front end built
// (the workbench's Serve switch): the engine reports through a CallbackRouter, the server's requests
// to the server and the rest to their owner. It keeps the model, the engine and the router alive
// while it serves.
#pragma once
#include <memory>
#include <string>
#include <thread>

#include "core/engine/callback_router.h"
#include "core/server/openai_server.h"

namespace inferscope {

class BackgroundServer {
 public:
  // Binds and starts serving; throws std::runtime_error saying why it cannot. `engine` must have been
  // built with router->callbacks().
  BackgroundServer(std::shared_ptr<const LlamaModel> model, std::shared_ptr<InferenceEngine> engine,
                   std::shared_ptr<CallbackRouter> router, ServeOptions options);
  // Stops accepting, cancels the requests in flight (they end at the engine's next step), waits until
  // every connection has ended and detaches from the router.
  ~BackgroundServer();
  BackgroundServer(const BackgroundServer&) = delete;
  BackgroundServer& operator=(const BackgroundServer&) = delete;

  std::string url() const { return server_->url(); }
  int32_t port() const { return server_->port(); }

 private:
  std::shared_ptr<const LlamaModel> model_;
  std::shared_ptr<InferenceEngine> engine_;
  std::shared_ptr<CallbackRouter> router_;
  RequestStreams streams_;
  std::unique_ptr<InferenceEngine> view_;  // the engine as the server sees it (router's guest)
  std::unique_ptr<OpenAiServer> server_;
  std::thread thread_;                     // last: runs serve() once everything above exists
};

}  // namespace inferscope
