#include "gui/compare/compare_workload.h"

#include <QDir>
#include <algorithm>
#include <stdexcept>

#include "core/engine/prompt.h"
#include "core/workload/workload_summary.h"
#include "gui/bridge/resource_path.h"

namespace inferscope::gui {

QStringList builtin_workloads() {
  const QDir dir(resolve_resource_path("resources/workloads"));
  QStringList paths;
  for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) paths << dir.filePath(name);
  return paths;
}

std::vector<Request> chat_requests(const LlamaModel& model, const std::vector<ChatMessage>& messages, int32_t max_tokens) {
  // The prompt is the conversation up to its last user turn (a reply already given is what A and B redo).
  auto last_user = std::find_if(messages.rbegin(), messages.rend(), [](const ChatMessage& m) { return m.role == "user"; });
  if (last_user == messages.rend()) throw std::runtime_error("the current chat session has no user turn to compare on");
  Request r;
  r.tokens = encode_chat(model, std::vector<ChatMessage>(messages.begin(), last_user.base()));
  r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
  r.max_output_tokens = max_tokens;
  return {std::move(r)};
}

std::vector<Request> file_requests(const LlamaModel& model, const Workload& workload) {
  const Tokenizer& tokenizer = model.tokenizer();
  return materialize_workload(
      workload, [&](std::string_view text, bool add_bos) { return tokenizer.encode(text, add_bos); },
      model.config().vocab_size, 1);
}

std::vector<Request> server_file_requests(const Workload& workload, const std::string& path) {
  return materialize_workload(
      workload,
      [&](std::string_view, bool) -> std::vector<TokenId> {
        throw std::runtime_error(path + " has text prompts, which need the served model's tokenizer: open that model "
                                 "locally (its tokenizer makes the prompt ids), or use a workload of prompt_tokens");
      },
      kServerOnlyVocab, 1);
}

std::vector<RequestId> synthetic_prompt_ids(const Workload& workload) {
  std::vector<RequestId> ids;
  // materialize_workload numbers the requests in file order.
  for (size_t i = 0; i < workload.requests.size(); ++i) {
    if (has_synthetic_prompt(workload.requests[i])) ids.push_back(static_cast<RequestId>(i));
  }
  return ids;
}

}  // namespace inferscope::gui
