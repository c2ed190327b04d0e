#include "core/model/forward_pass.h"

#include <stdexcept>
#include <string>

namespace inferscope {

BatchSize check_batch(std::span<const BatchSeq> batch, const KvCache& kv, int32_t vocab_size) {
  BatchSize size;
  for (const BatchSeq& s : batch) {
    if (s.pos0 < 0 || s.pos0 + static_cast<int64_t>(s.tokens.size()) > kv.length(s.seq)) {
      throw std::invalid_argument("forward: sequence " + std::to_string(s.seq) + " has no cache room for positions " +
                                  std::to_string(s.pos0) + ".." + std::to_string(s.pos0 + s.tokens.size()));
    }
    size.tokens += static_cast<int64_t>(s.tokens.size());
    size.logits_rows += static_cast<int64_t>(s.tokens.size()) - first_logits_token(s);
  }
  for (const BatchSeq& s : batch) {
    for (TokenId id : s.tokens) {
      if (id < 0 || id >= vocab_size) {
        throw std::invalid_argument("forward: token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                    std::to_string(vocab_size - 1) + ")");
      }
    }
  }
  return size;
}

}  // namespace inferscope
