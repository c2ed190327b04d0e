#include "core/cuda/cuda_forward.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/attention/attention.h"
#include "core/model/llama_model.h"

namespace inferscope {
namespace {

// Selects CUDA device `index`, or throws saying why it cannot.
void select_device(int32_t index) {
  const std::string device = "--device cuda:" + std::to_string(index);
  if (const std::string& reason = gpu::device_unavailable_reason(); !reason.empty()) throw std::runtime_error(device + ": " + reason);
  int count = 0;
  INFERSCOPE_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (index >= count) {
    throw std::runtime_error(device + ": no CUDA device: this machine has " + std::to_string(count));
  }
  INFERSCOPE_CUDA_CHECK(cudaSetDevice(index));
}

// Throws std::invalid_argument naming the first thing of the model the CUDA kernels do not cover.
void check_supported(const LlamaConfig& c, const LlamaWeights& w, const MatmulOptions& matmul) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument("--device cuda: the CUDA forward pass does not support " + what + " (model " +
                                c.architecture + ") yet; use --device cpu");
  };
  if (matmul.activations == ActivationPrecision::Q8) refuse("q8 activations (--activations q8)");
  if (c.traits.embed_scale) refuse("scaled embeddings");
  if (c.traits.ffn_activation == FfnActivation::GeluTanh) refuse("the GELU feed-forward gate");
  if (!c.local_layers.empty()) refuse("local attention layers with their own RoPE");
  if (c.final_logit_softcap > 0.0f) refuse("the final logit soft cap");
  if (c.query_scale != 1.0f) refuse("query scaling");
  for (const LlamaLayerWeights& lw : w.layers) {
    if (lw.bq != nullptr || lw.bk != nullptr || lw.bv != nullptr) refuse("Q/K/V biases");
    if (lw.attn_post_norm != nullptr || lw.ffn_post_norm != nullptr) refuse("post-attention and post-FFN norms");
  }
}

template <typename T>
void upload(DeviceAllocation& to, const std::vector<T>& from, cudaStream_t stream) {
  to.reserve(std::max<size_t>(from.size() * sizeof(T), 1));
  INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.data(), from.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
}

}  // namespace

// Event pairs recorded around attention and matmul launches, summed once the step has finished.
struct CudaForward::Timer {
  struct Span {
    cudaEvent_t start, stop;
    bool attention;
  };
  std::vector<Span> spans;
  size_t used = 0;

  ~Timer() {
    for (Span& s : spans) {
      cudaEventDestroy(s.start);
      cudaEventDestroy(s.stop);
    }
  }
  size_t begin(bool attention, cudaStream_t stream) {
    if (used == spans.size()) {
      Span s{};
      INFERSCOPE_CUDA_CHECK(cudaEventCreate(&s.start));
      INFERSCOPE_CUDA_CHECK(cudaEventCreate(&s.stop));
      spans.push_back(s);
    }
    spans[used].attention = attention;
    INFERSCOPE_CUDA_CHECK(cudaEventRecord(spans[used].start, stream));
    return used++;
  }
  void end(size_t span, cudaStream_t stream) { INFERSCOPE_CUDA_CHECK(cudaEventRecord(spans[span].stop, stream)); }
  // After the stream has finished: seconds of attention and of matmuls; forgets the spans.
  void sum(double& attention, double& matmul) {
    attention = matmul = 0;
    for (size_t i = 0; i < used; ++i) {
      float ms = 0;
      INFERSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, spans[i].start, spans[i].stop));
      (spans[i].attention ? attention : matmul) += ms * 1e-3;
    }
    used = 0;
  }
};

CudaForward::CudaForward(const LlamaModel& model, const LlamaWeights& weights, const MatmulOptions& matmul,
                         int32_t device)
    : model_(model), timer_(std::make_unique<Timer>()) {
  check_supported(model.config(), weights, matmul);
  select_device(device);
  INFERSCOPE_CUDA_CHECK(cudaStreamCreate(&stream_));
  weights_ = std::make_unique<DeviceWeights>(model.config(), weights);
}

CudaForward::~CudaForward() {
  timer_.reset();
  cudaStreamDestroy(stream_);
}

std::optional<DeviceMemory> CudaForward::device_memory() const {
  DeviceMemory m;
  m.weights = weights_->bytes();
  m.kv = mirror_ ? mirror_->bytes() : 0;
  for (const DeviceAllocation* a : {&x_, &xb_, &delta_, &q_, &k_, &v_, &att_, &gate_, &up_, &last_, &logits_,
                                    &attention_scratch_, &tokens_, &positions_, &block_tables_, &store_rows_}) {
    m.scratch += a->bytes();
  }
  return m;
}

void CudaForward::bind(KvCache& kv) {
  if (kv.geometry().dtype != DType::F16 && kv.geometry().dtype != DType::F32) {
    throw std::invalid_argument("--device cuda: the CUDA forward pass does not support a q8 KV cache (--kv-dtype q8) "
                                "yet; use f16 or f32");
  }
  if (bound_ != &kv || !mirror_ || mirror_regions_ != kv.storage_regions()) {
    mirror_ = std::make_shared<DeviceKvMirror>(kv);
    mirror_regions_ = kv.storage_regions();
    bound_ = &kv;
  }
  kv.set_copy_listener(mirror_);  // again each step: a new cache may sit where an old one was
}

void CudaForward::upload_step(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers) {
  const int32_t hd = model_.config().head_dim;
  host_tokens_.clear();
  host_positions_.clear();
  host_tables_.clear();
  table_offset_.clear();
  for (const BatchSeq& s : batch) {
    host_tokens_.insert(host_tokens_.end(), s.tokens.begin(), s.tokens.end());
    for (size_t i = 0; i < s.tokens.size(); ++i) host_positions_.push_back(s.pos0 + static_cast<int32_t>(i));
    // one block table per sequence: every layer's view shares it (same blocks, other pools)
    const KvView view = kv.view(0, s.seq);
    table_offset_.push_back(host_tables_.size());
    const int32_t n_blocks = (view.length + view.block_size - 1) / view.block_size;
    host_tables_.insert(host_tables_.end(), view.block_table, view.block_table + n_blocks);
  }
  // where each new token's K and V rows (KV head 0) go in each layer's device pools
  const size_t n_tok = host_tokens_.size();
  host_store_rows_.assign(static_cast<size_t>(n_layers) * 2 * n_tok, nullptr);
  store_head_stride_ = batch.empty() ? 0 : kv.view(0, batch.front().seq).head_stride;  // the same for every view
  for (int32_t l = 0; l < n_layers; ++l) {
    uint8_t** k_rows = host_store_rows_.data() + static_cast<size_t>(l) * 2 * n_tok;
    uint8_t** v_rows = k_rows + n_tok;
    size_t t = 0;
    for (const BatchSeq& s : batch) {
      const KvView view = kv.view(l, s.seq);
      for (size_t i = 0; i < s.tokens.size(); ++i, ++t) {
        const int32_t pos = s.pos0 + static_cast<int32_t>(i);
        k_rows[t] = mirror_->device(view.key(pos, 0, hd));
        v_rows[t] = mirror_->device(view.value(pos, 0, hd));
      }
    }
  }
  upload(tokens_, host_tokens_, stream_);
  upload(positions_, host_positions_, stream_);
  upload(block_tables_, host_tables_, stream_);
  upload(store_rows_, host_store_rows_, stream_);
}

void CudaForward::gemv_rows(const gpu::DeviceMatrix& w, const float* x, int64_t n, float* y) {
  const size_t span = timer_->begin(false, stream_);
  for (int64_t r = 0; r < n; r += gpu::kGemvMaxTokens) {
    gpu::gemv(w, x + r * w.cols, std::min(gpu::kGemvMaxTokens, n - r), y + r * w.rows, stream_);
  }
  timer_->end(span, stream_);
}

void CudaForward::attend(std::span<const BatchSeq> batch, const KvCache& kv, int32_t layer, bool naive) {
  const LlamaConfig& c = model_.config();
  const int64_t q_dim = c.q_dim();
  prefill_.clear();
  decode_.clear();
  int64_t t = 0;
  for (size_t si = 0; si < batch.size(); ++si) {
    const BatchSeq& s = batch[si];
    const auto n_q = static_cast<int32_t>(s.tokens.size());
    const KvView view = kv.view(layer, s.seq);
    const gpu::KvDeviceView device_view{mirror_->device(view.k_base), mirror_->device(view.v_base),
                                        block_tables_.get<int32_t>() + table_offset_[si], view.length,
                                        view.block_size, view.block_stride, view.head_stride};
    const gpu::DeviceAttentionSeq seq{q_.get<float>() + t * q_dim, att_.get<float>() + t * q_dim, n_q, s.pos0,
                                      device_view};
    t += n_q;
    if (n_q == 0) continue;
    // the naive kernel takes every sequence; flash takes prefill chunks, the decode kernel the rest
    (naive || n_q > gpu::kMaxDecodeQueries ? prefill_ : decode_).push_back(seq);
  }
  const gpu::DeviceAttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, c.layer_window(layer), kv.geometry().dtype};
  const size_t prefill_bytes = naive ? gpu::naive_attention_scratch_bytes(prefill_, shape)
                                     : gpu::flash_attention_scratch_bytes(prefill_, shape);
  const size_t decode_bytes = gpu::decode_attention_scratch_bytes(decode_, shape);
  const size_t bytes = std::max(prefill_bytes, decode_bytes);
  attention_scratch_.reserve(std::max<size_t>(bytes, 1));
  attention_scratch_bytes_ = std::max(attention_scratch_bytes_, bytes);
  const size_t span = timer_->begin(true, stream_);
  if (!prefill_.empty()) {
    (naive ? gpu::naive_attention : gpu::flash_attention)(prefill_, shape, attention_scratch_.get(),
                                                          attention_scratch_.bytes(), stream_);
  }
  if (!decode_.empty()) {
    gpu::decode_attention(decode_, shape, attention_scratch_.get(), attention_scratch_.bytes(), stream_);
  }
  timer_->end(span, stream_);
}

void CudaForward::run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& /*pool*/,
                      std::vector<float>& logits, int32_t layers) {
  const LlamaConfig& c = model_.config();
  const DeviceWeights& w = *weights_;
  const int64_t dim = c.dim, q_dim = c.q_dim(), kv_dim = c.kv_dim(), hd = c.head_dim;
  const BatchSize size = check_batch(batch, kv, c.vocab_size);
  const int64_t n_tok = size.tokens, n_logits = size.logits_rows;
  if (layers < 0 || layers > c.n_layers) {
    throw std::invalid_argument("forward: cannot run " + std::to_string(layers) + " of " + std::to_string(c.n_layers) +
                                " layers");
  }
  const int32_t n_layers = layers > 0 ? layers : c.n_layers;
  const bool naive = attention.name() == "naive";
  bind(kv);
  // the cache's copies since the last step (copy-on-write, forks) first, then this step's tables
  mirror_->flush(stream_);
  upload_step(batch, kv, n_layers);
  const auto floats = [n_tok](DeviceAllocation& a, int64_t width) {
    a.reserve(static_cast<size_t>(std::max<int64_t>(n_tok * width, 1)) * sizeof(float));
    return a.get<float>();
  };
  float *x = floats(x_, dim), *xb = floats(xb_, dim), *delta = floats(delta_, dim), *q = floats(q_, q_dim),
        *k = floats(k_, kv_dim), *v = floats(v_, kv_dim), *gate = floats(gate_, c.ffn_dim), *up = floats(up_, c.ffn_dim);
  floats(att_, q_dim);
  attention_scratch_bytes_ = 0;

  gpu::embedding(w.token_embd, tokens_.get<int32_t>(), n_tok, x, stream_);
  const gpu::RopeShape rope{c.n_heads,        c.n_kv_heads,       hd,
                            c.rope_dim,       c.rope_freq_base,   c.rope_freq_scale,
                            c.traits.rope_pairing, w.rope_freq_factors, c.rope_yarn.has_value(),
                            c.rope_yarn.value_or(RopeYarn{})};
  auto* const* store_rows = store_rows_.get<uint8_t*>();
  const float* residual_delta = nullptr;  // the previous block's output, added to x by the next norm
  for (int32_t l = 0; l < n_layers; ++l) {
    const DeviceLayerWeights& lw = w.layers[static_cast<size_t>(l)];
    gpu::add_rmsnorm(x, residual_delta, lw.attn_norm, xb, n_tok, dim, c.rms_eps, stream_);
    gemv_rows(lw.wq, xb, n_tok, q);
    gemv_rows(lw.wk, xb, n_tok, k);
    gemv_rows(lw.wv, xb, n_tok, v);
    // qwen3: every q and k head RMS-normalised on its own before RoPE
    if (lw.q_norm != nullptr) {
      gpu::add_rmsnorm(q, nullptr, lw.q_norm, q, n_tok * c.n_heads, hd, c.rms_eps, stream_);
      gpu::add_rmsnorm(k, nullptr, lw.k_norm, k, n_tok * c.n_kv_heads, hd, c.rms_eps, stream_);
    }
    gpu::rope_qk(q, k, positions_.get<int32_t>(), n_tok, rope, stream_);
    uint8_t* const* k_rows = store_rows + static_cast<size_t>(l) * 2 * n_tok;
    gpu::kv_store(k, v, k_rows, k_rows + n_tok, n_tok, c.n_kv_heads, hd, store_head_stride_, kv.geometry().dtype,
                  stream_);
    attend(batch, kv, l, naive);
    gemv_rows(lw.wo, att_.get<float>(), n_tok, delta);
    gpu::add_rmsnorm(x, delta, lw.ffn_norm, xb, n_tok, dim, c.rms_eps, stream_);
    gemv_rows(lw.w_gate, xb, n_tok, gate);
    gemv_rows(lw.w_up, xb, n_tok, up);
    gpu::swiglu(gate, up, n_tok * c.ffn_dim, stream_);
    gemv_rows(lw.w_down, gate, n_tok, delta);
    residual_delta = delta;
  }
  gpu::add_rmsnorm(x, residual_delta, w.output_norm, xb, n_tok, dim, c.rms_eps, stream_);

  // the rows that need logits, gathered, then the classifier
  float* last = [&] {
    last_.reserve(static_cast<size_t>(std::max<int64_t>(n_logits * dim, 1)) * sizeof(float));
    return last_.get<float>();
  }();
  int64_t r = 0, t = 0;
  for (const BatchSeq& s : batch) {
    const auto n = static_cast<int64_t>(s.tokens.size());
    const int64_t first = s.all_logits ? 0 : std::max<int64_t>(n - 1, 0);
    INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(last + r * dim, xb + (t + first) * dim,
                                          static_cast<size_t>((n - first) * dim) * sizeof(float),
                                          cudaMemcpyDeviceToDevice, stream_));
    r += n - first;
    t += n;
  }
  logits.resize(static_cast<size_t>(n_logits * c.vocab_size));
  logits_.reserve(std::max<size_t>(logits.size() * sizeof(float), 1));
  gemv_rows(w.output, last, n_logits, logits_.get<float>());
  INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), logits_.get(), logits.size() * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream_));
  INFERSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  timer_->sum(attention_seconds_, matmul_seconds_);
}

}  // namespace inferscope
