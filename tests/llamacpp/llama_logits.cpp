// llama.cpp's logits for a token sequence, to compare our forward pass with on the same GGUF file:
//   llama-logits MODEL [--top K] ID [ID ...]
// One prefill of all ids on a fresh context (one thread, f32 K/V, no flash attention), then one
// line per position: its vocab logits (%.9g, space-separated), or with --top K its K most likely
// next tokens as "id logprob" pairs, most likely first (log-softmax in double). Exit 1 with the
// reason on stderr.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  int first_id = 2, top = 0;
  if (argc > 3 && std::strcmp(argv[2], "--top") == 0) top = std::atoi(argv[3]), first_id = 4;
  if (argc <= first_id || (first_id == 4 && top <= 0)) {
    std::fprintf(stderr, "usage: llama-logits MODEL [--top K] ID [ID ...]\n");
    return 1;
  }
  std::vector<llama_token> ids;
  for (int i = first_id; i < argc; ++i) ids.push_back(static_cast<llama_token>(std::atoi(argv[i])));
  const auto n = static_cast<int32_t>(ids.size());

  llama_backend_init();
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);  // stdout carries only the logits
  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], model_params);
  if (model == nullptr) {
    std::fprintf(stderr, "llama-logits: llama.cpp could not load %s\n", argv[1]);
    return 1;
  }
  llama_context_params context_params = llama_context_default_params();
  context_params.n_ctx = static_cast<uint32_t>(n);
  context_params.n_batch = context_params.n_ubatch = static_cast<uint32_t>(n);
  context_params.n_threads = context_params.n_threads_batch = 1;
  context_params.type_k = context_params.type_v = GGML_TYPE_F32;
  context_params.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context* context = llama_init_from_model(model, context_params);
  if (context == nullptr) {
    std::fprintf(stderr, "llama-logits: llama.cpp could not make a context\n");
    return 1;
  }
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int32_t i = 0; i < n; ++i) {
    batch.token[i] = ids[static_cast<size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n;
  if (llama_decode(context, batch) != 0) {
    std::fprintf(stderr, "llama-logits: llama_decode failed\n");
    return 1;
  }
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (int32_t i = 0; i < n; ++i) {
    const float* row = llama_get_logits_ith(context, i);
    if (top == 0) {
      for (int32_t v = 0; v < vocab; ++v) std::printf(v == 0 ? "%.9g" : " %.9g", static_cast<double>(row[v]));
      std::printf("\n");
      continue;
    }
    // log p(v) = logit(v) - (max + ln sum exp(logit - max))
    const double max = *std::max_element(row, row + vocab);
    double sum = 0;
    for (int32_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v]) - max);
    const double log_sum = max + std::log(sum);
    std::iota(order.begin(), order.end(), 0);
    const int32_t k = std::min(top, vocab);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    for (int32_t j = 0; j < k; ++j) {
      const int32_t v = order[static_cast<size_t>(j)];
      std::printf(j == 0 ? "%d %.9g" : " %d %.9g", v, static_cast<double>(row[v]) - log_sum);
    }
    std::printf("\n");
  }
  llama_batch_free(batch);
  llama_free(context);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
