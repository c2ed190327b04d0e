#include "core/server/background_server.h"

namespace inferscope {

BackgroundServer::BackgroundServer(std::shared_ptr<const LlamaModel> model, std::shared_ptr<InferenceEngine> engine,
                                   std::shared_ptr<CallbackRouter> router, ServeOptions options)
    : model_(std::move(model)), engine_(std::move(engine)), router_(std::move(router)) {
  view_ = router_->attach_guest(*engine_, streams_.callbacks());
  try {
    server_ = std::make_unique<OpenAiServer>(*model_, *view_, streams_, std::move(options));
  } catch (...) {
    router_->detach_guest();
    throw;
  }
  thread_ = std::thread([this] { server_->serve(); });
}

BackgroundServer::~BackgroundServer() {
  server_->stop(0);
  thread_.join();
  router_->detach_guest();
}

}  // namespace inferscope
