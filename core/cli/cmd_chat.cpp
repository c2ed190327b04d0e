// inferscope-cli chat: an interactive conversation in the terminal, served by the Engine (or, with
// --endpoint, by a server through RemoteEngine; core/cli/engine_target.h). The reply
// streams from the engine thread while this thread keeps reading stdin: a line typed during a reply
// is queued as the next turn, and /stop cancels the reply. The prefix cache reuses the history's K/V.
// When the conversation fills the context, --context-policy says what a turn leaves out (or that it stops).
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

#include "core/cli/commands.h"
#include "core/cli/endpoint_options.h"
#include "core/cli/engine_target.h"
#include "core/cli/model_options.h"
#include "core/cli/sampling_options.h"
#include "core/engine/context_fit.h"
#include "core/engine/prompt.h"
#include "core/model/llama_model.h"

namespace inferscope::cli {
namespace {

// The conversation, shared by the stdin thread and the engine's callbacks.
struct Conversation {
  std::mutex mu;
  std::condition_variable idle;
  std::vector<ChatMessage> messages;
  std::deque<std::string> queued;  // turns typed while a reply streamed
  std::string reply;
  int32_t reply_tokens = 0;
  RequestId current = -1;          // the streaming reply, -1 when none
  bool forget_reply = false;       // /reset cancelled the streaming reply: keep it out of the history
};

}  // namespace

int cmd_chat(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--system", "", true, "system prompt (default: the template's own, if any)"},
      {"--n-predict", "-n", true, "tokens per reply at most (default 512)"},
      {"--context-policy", "", true, "when the conversation fills the context: stop, drop-oldest, drop-middle (default)"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(s);
  for (OptionSpec& s : endpoint_option_specs()) specs.push_back(s);
  if (print_help_if_asked("chat (--model PATH | --endpoint URL) [options]   (/stop ends a reply, /reset starts over, /quit leaves)",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const int32_t max_tokens = static_cast<int32_t>(args.integer("--n-predict", 512, 1, 1 << 30));
  const SamplingParams sampling = sampling_params(args);
  const std::string policy_name = args.str("--context-policy", "drop-middle");
  const std::optional<ContextPolicy> policy = parse_context_policy(policy_name);
  if (!policy) throw UsageError("--context-policy must be stop, drop-oldest or drop-middle, not '" + policy_name + "'");
  // The replies come from the local engine on a model, or from a server (--endpoint).
  const EngineTarget target = open_engine_target(args);
  const LlamaModel* model = target.model.get();

  Conversation conv;
  if (args.has("--system")) conv.messages.push_back({"system", args.str("--system", "")});
  const size_t first_turn = conv.messages.size();
  std::unique_ptr<InferenceEngine> engine;  // the local engine or the server's
  const int32_t context_length = model ? resolve_config(target.config, *model).context_length : 0;
  // Starts the next queued turn that fits the context (conv.mu held, nothing streaming).
  auto send_next = [&] {
    while (!conv.queued.empty()) {
      conv.messages.push_back({"user", conv.queued.front()});
      conv.queued.pop_front();
      EngineRequest r;
      r.messages = conv.messages;
      if (model) {
        // A server keeps its own context; the local engine's is fitted by the policy.
        const ContextFit fit = fit_context(conv.messages, *policy, context_length, reply_room(max_tokens, context_length),
                                           [&](const std::vector<ChatMessage>& m) {
                                             return static_cast<int32_t>(encode_chat(*model, m).size());
                                           });
        const std::string note = context_fit_note(fit, *policy, context_length);
        if (!note.empty()) std::cerr << "[" << note << "]\n";
        if (!fit.fits) {
          conv.messages.pop_back();  // the turn is not sent
          continue;
        }
        r.messages = fit.messages;
      }
      r.sampling = sampling;
      r.max_tokens = max_tokens;
      if (model) r.stop = model->chat_template().stop_strings();  // a server applies its own
      conv.reply.clear();
      conv.reply_tokens = 0;
      conv.current = engine->submit(std::move(r));
      return;
    }
  };
  EngineCallbacks cb;
  cb.on_token = [&](RequestId, std::string_view piece, TokenId token, const TokenTiming&) {
    std::lock_guard lock(conv.mu);
    conv.reply += piece;
    conv.reply_tokens += token >= 0 || token == kRemoteChunk ? 1 : 0;
    std::cout << piece << std::flush;
  };
  cb.on_error = [&](RequestId, const std::string& message) { std::cerr << "\n[error: " << message << "]\n"; };
  cb.on_reasoning = [&](RequestId, std::string_view text) { std::cerr << text << std::flush; };
  cb.on_usage = [&](RequestId, int32_t, int32_t generated) {
    std::lock_guard lock(conv.mu);
    conv.reply_tokens = generated;  // the server's count, not its chunks
  };
  cb.on_finished = [&](RequestId, StopReason reason) {
    std::lock_guard lock(conv.mu);
    if (conv.forget_reply) {
      conv.forget_reply = false;
    } else if (reason == StopReason::Failed) {
      conv.messages.pop_back();  // the turn could not be answered
    } else {
      conv.messages.push_back({"assistant", conv.reply});
    }
    std::cout << "\n";
    std::cerr << "[" << conv.reply_tokens << " tokens, " << stop_reason_name(reason) << "]\n";
    conv.current = -1;
    send_next();
    if (conv.current < 0) conv.idle.notify_all();
  };
  engine = target.start(cb);
  if (target.server) {
    std::cerr << target.server->endpoint.model << " on " << engine->source();
  } else {
    std::cerr << model->config().name << " (" << chat_family_name(model->chat_template().family) << " template)";
  }
  std::cerr << ". Type while a reply streams to queue the next turn; /stop ends a reply, /reset starts over, /quit leaves.\n";
  std::string line;
  while (std::getline(std::cin, line) && line != "/quit") {
    std::lock_guard lock(conv.mu);
    if (line == "/stop") {
      if (conv.current >= 0) engine->cancel(conv.current);
    } else if (line == "/reset") {
      if (conv.current >= 0) {
        engine->cancel(conv.current);
        conv.forget_reply = true;
      }
      conv.queued.clear();
      conv.messages.resize(first_turn);
      std::cout << "[conversation reset]\n";
    } else if (!line.empty()) {
      conv.queued.push_back(line);
      if (conv.current < 0) send_next();
    }
  }
  {
    // At the end of input, let the replies already asked for finish.
    std::unique_lock lock(conv.mu);
    if (line != "/quit") conv.idle.wait(lock, [&] { return conv.current < 0; });
    // /quit drops the turns still queued: the reply it cancels must not start one on a closing engine.
    conv.queued.clear();
  }
  engine.reset();  // joins the engine's threads before the conversation goes away
  return 0;
}

}  // namespace inferscope::cli
