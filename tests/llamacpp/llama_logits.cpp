// llama.cpp's logits for a token sequence, to compare our forward pass with on the same GGUF file:
//   llama-logits MODEL ID [ID ...]
// One prefill of all ids on a fresh context (one thread, f32 K/V, no flash attention), then one
// line per position with its vocab logits (%.9g, space-separated). Exit 1 with the reason on stderr.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: llama-logits MODEL ID [ID ...]\n");
    return 1;
  }
  std::vector<llama_token> ids;
  for (int i = 2; i < argc; ++i) ids.push_back(static_cast<llama_token>(std::atoi(argv[i])));
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
  for (int32_t i = 0; i < n; ++i) {
    const float* row = llama_get_logits_ith(context, i);
    for (int32_t v = 0; v < vocab; ++v) std::printf(v == 0 ? "%.9g" : " %.9g", static_cast<double>(row[v]));
    std::printf("\n");
  }
  llama_batch_free(batch);
  llama_free(context);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
