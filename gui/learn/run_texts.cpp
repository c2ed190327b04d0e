#include "gui/learn/run_texts.h"

#include "core/model/llama_model.h"
#include "gui/chat/token_trace.h"
#include "gui/chat/token_view.h"

namespace inferscope::gui {
namespace {

const char* kCachedStyle = "background-color:#bbf7d0;";

QString escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped().replace('\n', "<br>"); }

}  // namespace

std::map<RequestId, int32_t> prefix_cached_tokens(const EngineMetricsSnapshot& metrics) {
  std::map<RequestId, int32_t> cached;
  for (const StepMetrics& step : metrics.steps) {
    for (const StepSequence& s : step.sequences) {
      if (s.prefill_tokens > 0 || s.cached_tokens > 0) cached.try_emplace(s.id, s.cached_tokens);
    }
  }
  return cached;
}

QString prefix_hits_html(const MeasuredRun& run, const LlamaModel& model) {
  const std::map<RequestId, int32_t> cached = prefix_cached_tokens(run.result.metrics);
  QString html = QString("<p><span style=\"%1\">&nbsp;found in the prefix cache&nbsp;</span> computed</p>").arg(kCachedStyle);
  for (const Request& r : run.requests) {
    const auto it = cached.find(r.id);
    const size_t hit = it == cached.end() ? 0 : static_cast<size_t>(it->second);
    const std::vector<TokenId> head(r.tokens.begin(), r.tokens.begin() + static_cast<ptrdiff_t>(hit));
    const std::string all = model.tokenizer().decode(r.tokens);
    std::string cached_text = model.tokenizer().decode(head);
    // The cached part's text is where the prompt's text starts with it (a piece's leading space may differ).
    if (all.compare(0, cached_text.size(), cached_text) != 0) cached_text.clear();
    html += QString("<p><b>request %1</b> · %2 of %3 prompt tokens cached<br>").arg(r.id).arg(hit).arg(r.tokens.size());
    html += QString("<span style=\"%1\">%2</span>%3</p>")
                .arg(kCachedStyle, escaped(cached_text), escaped(all.substr(cached_text.size())));
  }
  return html;
}

QString spec_tokens_html(const MeasuredRun& run, const LlamaModel& model) {
  QString html = "<p>" + token_view_legend() + "</p>";
  for (const WorkloadOutput& out : run.result.outputs) {
    std::vector<TracedToken> trace;
    TraceBuilder builder;
    size_t next_verification = 0;
    for (size_t i = 0; i < out.pieces.size(); ++i) {
      // The verifications that came before this piece streamed.
      while (next_verification < out.verifications.size() && out.verifications[next_verification].before_piece == i) {
        const Verification& v = out.verifications[next_verification++].verification;
        builder.verified(v, v.rejected ? model.tokenizer().decode({v.refused.id}) : std::string());
      }
      builder.token(trace, out.pieces[i].piece, out.pieces[i].token);
    }
    html += QString("<p><b>request %1</b></p>").arg(out.id) + token_view_html(trace);
  }
  return html;
}

}  // namespace inferscope::gui
