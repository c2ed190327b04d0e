#include "core/cuda/cuda_forward.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/attention/attention.h"
#include "core/model/compute_device.h"
#include "core/model/device_failure.h"
#include "core/model/forward_recipe.h"
#include "core/model/llama_model.h"
#include "kernels/cuda/cuda_check.h"

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

// The steps of forward_recipe() the CUDA kernels run; any other step refuses the model by name.
constexpr ForwardStep kCudaSteps[] = {
    ForwardStep::AttentionNorm,    ForwardStep::QkvProjection,     ForwardStep::QkNorm,
    ForwardStep::Rope,             ForwardStep::KvStore,           ForwardStep::Attention,
    ForwardStep::OutputProjection, ForwardStep::AttentionResidual, ForwardStep::FfnNorm,
    ForwardStep::GateUpProjection, ForwardStep::SwiGlu,            ForwardStep::DownProjection,
    ForwardStep::FfnResidual,
};

// Throws std::invalid_argument naming the first thing of the model the CUDA kernels do not cover.
void check_supported(const LlamaConfig& c, const ForwardOptions& options) {
  const auto refuse = [&](std::string_view what) {
    throw std::invalid_argument("--device cuda: the CUDA forward pass does not support " + std::string(what) + " (model " +
                                c.architecture + ") yet; use --device cpu");
  };
  if (options.matmul.activations == ActivationPrecision::Q8) refuse("q8 activations (--activations q8)");
  for (ForwardStep step : forward_recipe(c).all()) {
    if (std::find(std::begin(kCudaSteps), std::end(kCudaSteps), step) == std::end(kCudaSteps)) {
      refuse(forward_step_name(step));
    }
  }
  if (!gpu::supported_head_dim(c.head_dim)) refuse("attention heads of " + std::to_string(c.head_dim) + " dimensions");
}

// Copies `from` to `to`, grown to fit first; true when `to` moved.
template <typename T>
bool upload(DeviceAllocation& to, const std::vector<T>& from, cudaStream_t stream) {
  const bool moved = to.reserve(std::max<size_t>(from.size() * sizeof(T), 1));
  INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.data(), from.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  return moved;
}

// Graphs unless the environment says INFERSCOPE_CUDA_GRAPHS=0.
bool graphs_from_environment() {
  const char* value = std::getenv("INFERSCOPE_CUDA_GRAPHS");
  return value == nullptr || std::string(value) != "0";
}

constexpr size_t kHeaderAlign = 256;  // launch_attention's alignment for a plan's header

}  // namespace

// Event pairs recorded around attention and matmul launches, summed once the step has finished.
struct CudaForward::Timer {
  struct Span {
    cudaEvent_t start, stop;
    bool attention;
  };
  std::vector<Span> spans;
  size_t used = 0;
  bool enabled = true;  // off while a step is captured: a graph's launches are not timed one by one

  ~Timer() {
    for (Span& s : spans) {
      cudaEventDestroy(s.start);
      cudaEventDestroy(s.stop);
    }
  }
  size_t begin(bool attention, cudaStream_t stream) {
    if (!enabled) return 0;
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
  void end(size_t span, cudaStream_t stream) {
    if (enabled) INFERSCOPE_CUDA_CHECK(cudaEventRecord(spans[span].stop, stream));
  }
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

CudaForward::CudaForward(const LlamaModel& model, const LlamaWeights& weights, const ForwardOptions& options,
                         int32_t device)
    : model_(model), recipe_(forward_recipe(model.config())), device_(device), timer_(std::make_unique<Timer>()), graphs_on_(graphs_from_environment()) {
  check_supported(model.config(), options);
  select_device(device);
  // non-blocking: no implicit synchronisation with the legacy default stream, which graph capture forbids
  INFERSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cublas_.emplace();
  weights_ = std::make_unique<DeviceWeights>(model.config(), weights);
}

CudaForward::~CudaForward() {
  cudaSetDevice(device_);  // the device its resources live on, whichever thread ends it
  timer_.reset();
  graphs_.clear();
  cublas_.reset();  // before the stream it was last bound to
  cudaStreamDestroy(stream_);
}

std::optional<DeviceMemory> CudaForward::device_memory() const {
  DeviceMemory m;
  m.weights = weights_->bytes();
  m.kv = mirror_ ? mirror_->bytes() : 0;
  for (const DeviceAllocation* a : {&x_, &xb_, &delta_, &q_, &k_, &v_, &att_, &gate_, &up_, &last_, &logits_,
                                    &attention_scratch_, &gemm_scratch_, &tokens_, &positions_, &block_tables_,
                                    &store_rows_, &attention_headers_}) {
    m.scratch += a->bytes();
  }
  return m;
}

void CudaForward::bind(KvCache& kv) {
  INFERSCOPE_CUDA_CHECK(cudaSetDevice(device_));  // as run_on_device: the calling thread's device
  if (kv.geometry().dtype != DType::F16 && kv.geometry().dtype != DType::F32) {
    throw std::invalid_argument("--device cuda: the CUDA forward pass does not support a q8 KV cache (--kv-dtype q8) "
                                "yet; use f16 or f32");
  }
  if (bound_ != &kv || !mirror_ || mirror_regions_ != kv.storage_regions()) {
    mirror_ = std::make_shared<DeviceKvMirror>(kv);
    mirror_regions_ = kv.storage_regions();
    bound_ = &kv;
    graphs_.clear();  // captured for another cache's storage and layout
  }
  kv.set_copy_listener(mirror_);  // again each step: a new cache may sit where an old one was
}

void CudaForward::upload_step(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers) {
  const int32_t hd = model_.config().head_dim;
  host_tokens_.clear();
  host_positions_.clear();
  host_tables_.clear();
  table_offset_.clear();
  token_rows_.clear();
  logit_rows_.clear();
  for (const BatchSeq& s : batch) {
    const auto n = static_cast<int64_t>(s.tokens.size());
    token_rows_.push_back(n);
    logit_rows_.push_back(n - first_logits_token(s));
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
  // the kernels read these at their addresses, which a graph keeps: one that moves drops the graphs
  for (const bool moved : {upload(tokens_, host_tokens_, stream_), upload(positions_, host_positions_, stream_),
                           upload(store_rows_, host_store_rows_, stream_)}) {
    if (moved) graphs_.clear();
  }
  // read only through the attention headers' copies of its address: it may move freely
  upload(block_tables_, host_tables_, stream_);
}

void CudaForward::reserve(DeviceAllocation& a, size_t bytes) {
  if (a.reserve(bytes)) graphs_.clear();
}

void CudaForward::reserve_activations(int64_t n_tok, int64_t n_logits) {
  const LlamaConfig& c = model_.config();
  const auto floats = [&](DeviceAllocation& a, int64_t rows, int64_t width) {
    reserve(a, static_cast<size_t>(std::max<int64_t>(rows * width, 1)) * sizeof(float));
  };
  for (DeviceAllocation* a : {&x_, &xb_, &delta_}) floats(*a, n_tok, c.dim);
  for (DeviceAllocation* a : {&q_, &att_}) floats(*a, n_tok, c.q_dim());
  for (DeviceAllocation* a : {&k_, &v_}) floats(*a, n_tok, c.kv_dim());
  for (DeviceAllocation* a : {&gate_, &up_}) floats(*a, n_tok, c.ffn_dim);
  floats(last_, n_logits, c.dim);
  floats(logits_, n_logits, c.vocab_size);
}

void CudaForward::matmul(const gpu::DeviceMatrix& w, const float* x, std::span<const int64_t> rows, float* y) {
  const size_t span = timer_->begin(false, stream_);
  int64_t r = 0;
  for (size_t i = 0; i < rows.size();) {
    // a run of sequences of one kind: prefill chunks (more than 8 rows each) or not
    const bool prefill = rows[i] > gpu::kGemvMaxTokens;
    int64_t n = 0;
    for (; i < rows.size() && (rows[i] > gpu::kGemvMaxTokens) == prefill; ++i) n += rows[i];
    if (prefill) {
      // prefill steps are never captured, so the scratch may grow here
      gemm_scratch_.reserve(gpu::gemm_scratch_bytes(w, n));
      gpu::gemm(*cublas_, w, x + r * w.cols, n, y + r * w.rows, gemm_scratch_.get(), gemm_scratch_.bytes(), stream_);
    } else {
      // the GEMV is batch invariant, so how the run is cut into chunks of 8 does not matter
      for (int64_t c = 0; c < n; c += gpu::kGemvMaxTokens) {
        gpu::gemv(w, x + (r + c) * w.cols, std::min(gpu::kGemvMaxTokens, n - c), y + (r + c) * w.rows, stream_);
      }
    }
    r += n;
  }
  timer_->end(span, stream_);
}

size_t CudaForward::plan_attention(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers, bool naive) {
  const LlamaConfig& c = model_.config();
  const int64_t q_dim = c.q_dim();
  host_headers_.clear();
  attention_calls_.clear();
  size_t scratch_bytes = 0;
  size_t data_bytes = 0;
  for (int32_t layer = 0; layer < n_layers; ++layer) {
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
    const gpu::DeviceAttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim, c.layer_window(layer),
                                          kv.geometry().dtype};
    using gpu::AttentionSchedule;
    const AttentionSchedule prefill_schedule = naive ? AttentionSchedule::Naive : AttentionSchedule::Flash;
    for (const auto& [schedule, seqs] :
         {std::pair{prefill_schedule, &prefill_}, std::pair{AttentionSchedule::Decode, &decode_}}) {
      if (seqs->empty()) continue;
      gpu::AttentionPlan plan = gpu::plan_attention(schedule, *seqs, shape);
      const size_t at = (host_headers_.size() + kHeaderAlign - 1) / kHeaderAlign * kHeaderAlign;
      host_headers_.resize(at + plan.header.size());
      std::memcpy(host_headers_.data() + at, plan.header.data(), plan.header.size());
      // the layer's calls run one after the other on the stream, so they share one data scratch
      data_bytes = std::max(data_bytes, plan.data_bytes);
      scratch_bytes = std::max(scratch_bytes, plan.header.size() + plan.data_bytes);
      attention_calls_.push_back(PlannedAttention{layer, shape, std::move(plan), at});
    }
  }
  if (upload(attention_headers_, host_headers_, stream_)) graphs_.clear();
  reserve(attention_scratch_, std::max<size_t>(data_bytes, 1));
  return scratch_bytes;
}

void CudaForward::attend(int32_t layer) {
  const size_t span = timer_->begin(true, stream_);
  for (const PlannedAttention& a : attention_calls_) {
    if (a.layer != layer) continue;
    gpu::launch_attention(a.plan, attention_headers_.get<uint8_t>() + a.header_at, attention_scratch_.get(), a.shape,
                          stream_);
  }
  timer_->end(span, stream_);
}

CudaGraphs::Key CudaForward::graph_key(int32_t n_layers) const {
  // the token count sets every kernel's grid but attention's; each attention call's grid and header
  // layout follow from its work counts (its header's size and place from those too)
  CudaGraphs::Key key{static_cast<int64_t>(host_tokens_.size()), n_layers};
  for (const PlannedAttention& a : attention_calls_) {
    key.insert(key.end(), {a.layer, static_cast<int64_t>(a.plan.schedule), a.plan.n_tasks, a.plan.n_merges,
                           static_cast<int64_t>(a.header_at), static_cast<int64_t>(a.plan.tasks_at),
                           static_cast<int64_t>(a.plan.merges_at)});
  }
  return key;
}

ForwardStats CudaForward::run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention,
                              ThreadPool& /*pool*/, std::vector<float>& logits, int32_t layers) {
  // a failed CUDA or cuBLAS call is the device's failure: the engine goes on on the CPU, or on the
  // device when the error leaves its context usable
  const auto failure = [&](const std::exception& e, bool context_usable) {
    return DeviceFailure(compute_device_name(ComputeDevice{true, device_}) + ": " + e.what(), !context_usable);
  };
  try {
    return run_on_device(batch, kv, attention, logits, layers);
  } catch (const gpu::CudaError& e) {
    throw failure(e, gpu::cuda_error_leaves_context(e.code()));
  } catch (const gpu::CublasError& e) {
    throw failure(e, gpu::cublas_error_leaves_context(e.code()));
  }
}

ForwardStats CudaForward::run_on_device(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention,
                                        std::vector<float>& logits, int32_t layers) {
  // the device is each thread's own: the engine may build this pass on one thread and run it on another
  INFERSCOPE_CUDA_CHECK(cudaSetDevice(device_));
  const LlamaConfig& c = model_.config();
  const BatchSize size = check_batch(batch, kv, c.vocab_size);
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
  reserve_activations(size.tokens, size.logits_rows);
  ForwardStats stats;
  stats.attention_scratch_bytes = plan_attention(batch, kv, n_layers, naive);
  logits.resize(static_cast<size_t>(size.logits_rows * c.vocab_size));

  // a decode step (every sequence at one token, its attention the decode kernel's) runs as its shape's
  // graph from the second time that shape is seen
  const bool decode_step = !batch.empty() && std::all_of(batch.begin(), batch.end(), [](const BatchSeq& s) {
    return s.tokens.size() == 1;
  });
  const DType kv_dtype = kv.geometry().dtype;
  bool from_graph = false;
  if (graphs_on_ && decode_step && !naive) {
    timer_->enabled = false;  // a graph's launches are not timed one by one
    from_graph = graphs_.launch(graph_key(n_layers), stream_, [&] { enqueue(batch, n_layers, kv_dtype); });
  }
  timer_->enabled = !from_graph;
  if (!from_graph) enqueue(batch, n_layers, kv_dtype);
  INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(logits.data(), logits_.get(), logits.size() * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream_));
  INFERSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  timer_->sum(stats.attention_seconds, stats.matmul_seconds);
  return stats;
}

void CudaForward::enqueue(std::span<const BatchSeq> batch, int32_t n_layers, DType kv_dtype) {
  const LlamaConfig& c = model_.config();
  const DeviceWeights& w = *weights_;
  const int64_t dim = c.dim, hd = c.head_dim, n_tok = static_cast<int64_t>(host_tokens_.size());
  float *x = x_.get<float>(), *xb = xb_.get<float>(), *delta = delta_.get<float>(), *q = q_.get<float>(),
        *k = k_.get<float>(), *v = v_.get<float>(), *gate = gate_.get<float>(), *up = up_.get<float>();

  gpu::embedding(w.token_embd, tokens_.get<int32_t>(), n_tok, x, stream_);
  const gpu::RopeShape rope{c.n_heads,        c.n_kv_heads,       hd,
                            c.rope_dim,       c.rope_freq_base,   c.rope_freq_scale,
                            c.traits.rope_pairing, w.rope_freq_factors, c.rope_yarn.has_value(),
                            c.rope_yarn.value_or(RopeYarn{})};
  auto* const* store_rows = store_rows_.get<uint8_t*>();
  // A residual's delta is added to x by the norm that follows it (one fused kernel); the final norm
  // takes the last layer's.
  const float* residual_delta = nullptr;
  for (int32_t l = 0; l < n_layers; ++l) {
    const DeviceLayerWeights& lw = w.layers[static_cast<size_t>(l)];
    // the layer's steps, as forward_recipe() lists them for this model (check_supported refused the rest)
    for (ForwardStep step : recipe_.layer) {
      switch (step) {
        case ForwardStep::AttentionNorm:
          gpu::add_rmsnorm(x, residual_delta, lw.attn_norm, xb, n_tok, dim, c.rms_eps, stream_);
          residual_delta = nullptr;
          break;
        case ForwardStep::QkvProjection:
          matmul(lw.wq, xb, token_rows_, q);
          matmul(lw.wk, xb, token_rows_, k);
          matmul(lw.wv, xb, token_rows_, v);
          break;
        case ForwardStep::QkNorm:
          // every q and k head RMS-normalised on its own before RoPE
          gpu::add_rmsnorm(q, nullptr, lw.q_norm, q, n_tok * c.n_heads, hd, c.rms_eps, stream_);
          gpu::add_rmsnorm(k, nullptr, lw.k_norm, k, n_tok * c.n_kv_heads, hd, c.rms_eps, stream_);
          break;
        case ForwardStep::Rope:
          gpu::rope_qk(q, k, positions_.get<int32_t>(), n_tok, rope, stream_);
          break;
        case ForwardStep::KvStore: {
          uint8_t* const* k_rows = store_rows + static_cast<size_t>(l) * 2 * n_tok;
          gpu::kv_store(k, v, k_rows, k_rows + n_tok, n_tok, c.n_kv_heads, hd, store_head_stride_, kv_dtype, stream_);
          break;
        }
        case ForwardStep::Attention:
          attend(l);
          break;
        case ForwardStep::OutputProjection:
          matmul(lw.wo, att_.get<float>(), token_rows_, delta);
          break;
        case ForwardStep::AttentionResidual:
        case ForwardStep::FfnResidual:
          residual_delta = delta;
          break;
        case ForwardStep::FfnNorm:
          gpu::add_rmsnorm(x, residual_delta, lw.ffn_norm, xb, n_tok, dim, c.rms_eps, stream_);
          residual_delta = nullptr;
          break;
        case ForwardStep::GateUpProjection:
          matmul(lw.w_gate, xb, token_rows_, gate);
          matmul(lw.w_up, xb, token_rows_, up);
          break;
        case ForwardStep::SwiGlu:
          gpu::swiglu(gate, up, n_tok * c.ffn_dim, stream_);
          break;
        case ForwardStep::DownProjection:
          matmul(lw.w_down, gate, token_rows_, delta);
          break;
        case ForwardStep::ScaledEmbedding:
        case ForwardStep::QkvBias:
        case ForwardStep::LocalGlobalRope:
        case ForwardStep::QueryScale:
        case ForwardStep::AttentionPostNorm:
        case ForwardStep::GeluGate:
        case ForwardStep::FfnPostNorm:
        case ForwardStep::LogitSoftcap:
          throw std::logic_error("CudaForward: " + std::string(forward_step_name(step)) + " has no CUDA kernel");
      }
    }
  }
  gpu::add_rmsnorm(x, residual_delta, w.output_norm, xb, n_tok, dim, c.rms_eps, stream_);

  // the rows that need logits, gathered, then the classifier
  float* last = last_.get<float>();
  int64_t r = 0, t = 0;
  for (const BatchSeq& s : batch) {
    const auto n = static_cast<int64_t>(s.tokens.size());
    const int64_t first = first_logits_token(s);
    INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(last + r * dim, xb + (t + first) * dim,
                                          static_cast<size_t>((n - first) * dim) * sizeof(float),
                                          cudaMemcpyDeviceToDevice, stream_));
    r += n - first;
    t += n;
  }
  matmul(w.output, last, logit_rows_, logits_.get<float>());
}

}  // namespace inferscope
