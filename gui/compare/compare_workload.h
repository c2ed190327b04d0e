// The requests of an A/B comparison: the current chat (its turns rendered with the model's chat
// template, as one request), or a workload file (resources/workloads/*.json or the user's own),
// tokenized with the model's tokenizer.
#pragma once
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

#include "core/model/llama_model.h"
#include "core/sched/request.h"
#include "core/workload/workload.h"

namespace inferscope::gui {

// The workloads that ship with Inferscope (resources/workloads/*.json), as paths, by name.
QStringList builtin_workloads();
// One request: `messages` up to the last user turn, rendered for the assistant's reply, up to
// `max_tokens` tokens. Throws std::runtime_error when there is no user turn.
std::vector<Request> chat_requests(const LlamaModel& model, const std::vector<ChatMessage>& messages, int32_t max_tokens);
// A workload's requests (pseudo-random prompt ids from seed 1, as serve-sim).
std::vector<Request> file_requests(const LlamaModel& model, const Workload& workload);
// The same without a local model, for two servers: pseudo-random prompt ids below kServerOnlyVocab
// (byte tokens in the vocabularies servers run); a text prompt throws, naming the file, as it needs
// the served model's tokenizer.
inline constexpr int32_t kServerOnlyVocab = 256;
std::vector<Request> server_file_requests(const Workload& workload, const std::string& path);
// The ids file_requests gives the requests whose prompts are pseudo-random (has_synthetic_prompt).
std::vector<RequestId> synthetic_prompt_ids(const Workload& workload);

}  // namespace inferscope::gui
