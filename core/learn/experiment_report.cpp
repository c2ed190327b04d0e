#include "core/learn/experiment_report.h"

#include <sstream>

#include "core/learn/narration.h"

namespace inferscope {
namespace {

// The figures every run's row shows: value suffix, column title, format.
struct Column {
  const char* value;
  const char* title;
  const char* format;
};
constexpr Column kColumns[] = {
    {"tokens_per_second", "output tok/s (engine)", ".1f"},
    {"time_to_first_token_seconds_p50", "TTFT p50", "ms"},
    {"max_concurrent_requests", "max running", ""},
    {"kv_cache_usage_perc_peak", "KV peak", "%"},
    {"prefill_tokens", "prefill tokens", ""},
    {"decode_tokens", "decode tokens", ""},
    {"duration_s", "seconds", ".2f"},
};

}  // namespace

std::string experiment_markdown(const Experiment& e, const ExperimentResult& r, const std::string& model_name,
                                const std::vector<ReportImage>& images) {
  std::ostringstream md;
  md << "# " << e.title << "\n\n";
  if (!e.question.empty()) md << "*" << e.question << "*\n\n";
  md << "Model: " << model_name << ". Runs: ";
  for (size_t i = 0; i < e.runs.size(); ++i) {
    md << (i ? ", " : "") << "**" << e.runs[i].name << "** (" << (e.runs[i].config.empty() ? "base config" : e.runs[i].config.dump())
       << ")";
  }
  md << ".\n\n";
  for (const std::string& line : r.narration) md << line << "\n\n";
  if (!r.conclusion.empty()) md << "**Conclusion.** " << r.conclusion << "\n\n";
  md << "| run |";
  for (const Column& c : kColumns) md << " " << c.title << " |";
  md << "\n| --- |";
  for (size_t i = 0; i < std::size(kColumns); ++i) md << " ---: |";
  md << "\n";
  for (const MeasuredRun& run : r.runs) {
    md << "| " << run.name << " |";
    for (const Column& c : kColumns) {
      const auto it = r.values.find(run.name + "." + c.value);
      md << " " << (it == r.values.end() ? "" : format_value(it->second, c.format)) << " |";
    }
    md << "\n";
  }
  for (const auto& [caption, path] : images) md << "\n![" << caption << "](" << path << ")\n";
  return md.str();
}

}  // namespace inferscope
