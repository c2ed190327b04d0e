#include "core/remote/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/remote/text_excerpt.h"

namespace inferscope {

const char* metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Histogram: return "histogram";
    case MetricType::Summary: return "summary";
    case MetricType::Untyped: return "untyped";
  }
  return "?";
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

// A float as the format writes it: decimal with optional exponent, NaN, +Inf, -Inf.
std::optional<double> parse_float(std::string_view token) {
  if (token == "+Inf") return std::numeric_limits<double>::infinity();
  if (token == "-Inf") return -std::numeric_limits<double>::infinity();
  if (token == "NaN") return kNaN;
  if (token.starts_with('+')) token.remove_prefix(1);  // from_chars takes no leading '+'
  double v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return v;
}

std::string labels_text(const Labels& labels) {
  std::string out;
  for (const auto& [name, value] : labels) out += (out.empty() ? "{" : ",") + name + "=\"" + value + "\"";
  return out.empty() ? out : out + "}";
}

// One line being read, with errors that name it.
class LineReader {
 public:
  LineReader(std::string_view line, size_t number) : line_(line), number_(number) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("metrics line " + std::to_string(number_) + ": " + what + ": " + text_excerpt(line_));
  }

  bool at_end() const { return pos_ >= line_.size(); }
  char peek() const { return at_end() ? '\0' : line_[pos_]; }
  size_t skip_blanks() {
    const size_t start = pos_;
    while (!at_end() && is_blank(line_[pos_])) ++pos_;
    return pos_ - start;
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  // A metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or, with colons off, a label name.
  std::string_view name(bool colons) {
    const size_t start = pos_;
    auto ok = [&](char c, bool first) { return (first ? is_name_start(c) : is_name_char(c)) || (colons && c == ':'); };
    while (!at_end() && ok(line_[pos_], pos_ == start)) ++pos_;
    return line_.substr(start, pos_ - start);
  }
  // Up to the next blank or the end of the line.
  std::string_view token() {
    const size_t start = pos_;
    while (!at_end() && !is_blank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }
  // The rest of the line with `\\` and `\n` unescaped, and `\"` too when `quote_ends` (label values,
  // which then end at an unescaped '"').
  std::string escaped_text(bool quote_ends) {
    std::string out;
    while (!at_end()) {
      const char c = line_[pos_++];
      if (quote_ends && c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      ++pos_;
      if (e == '\\') out += '\\';
      else if (e == 'n') out += '\n';
      else if (e == '"' && quote_ends) out += '"';
      else fail(e == '\0' ? std::string("escape at the end of the line") : std::string("invalid escape \\") + e);
    }
    if (quote_ends) fail("label value is not closed with '\"'");
    return out;
  }
  Labels labels() {
    Labels out;
    skip_blanks();
    while (!accept('}')) {
      const std::string label(name(false));
      if (label.empty()) fail(at_end() ? "label set is not closed with '}'" : "expected a label name");
      skip_blanks();
      if (!accept('=')) fail("expected '=' after label name '" + label + "'");
      skip_blanks();
      if (!accept('"')) fail("expected '\"' to open the value of label '" + label + "'");
      if (!out.emplace(label, escaped_text(true)).second) fail("label '" + label + "' appears twice");
      skip_blanks();
      if (!accept(',') && peek() != '}') fail("expected ',' or '}' after the value of label '" + label + "'");
      skip_blanks();
    }
    return out;
  }

 private:
  std::string_view line_;
  size_t number_;
  size_t pos_ = 0;
};

// Where a family stands while the body is read.
struct FamilyState {
  MetricFamily family;
  bool typed = false;
  bool helped = false;
  bool has_samples = false;
  std::map<Labels, size_t> series;        // histogram or summary series by label set
  std::map<Labels, size_t> series_lines;  // the line of each series' first sample, for later errors
};

class TextParser {
 public:
  void line(std::string_view text, size_t number) {
    LineReader in(text, number);
    in.skip_blanks();
    if (in.at_end()) return;
    if (in.accept('#')) return comment(in);
    sample(in, number);
  }

  std::vector<MetricFamily> finish() {
    std::vector<MetricFamily> out;
    for (FamilyState& state : families_) {
      finish_series(state);
      out.push_back(std::move(state.family));
    }
    return out;
  }

 private:
  void comment(LineReader& in) {
    in.skip_blanks();
    const std::string_view keyword = in.token();
    if (keyword != "HELP" && keyword != "TYPE") return;  // any other comment is ignored
    if (in.skip_blanks() == 0) in.fail("expected a metric name after " + std::string(keyword));
    const std::string name(in.name(true));
    if (name.empty()) in.fail("invalid metric name after " + std::string(keyword));
    if (!in.at_end() && in.skip_blanks() == 0) in.fail("invalid metric name after " + std::string(keyword));
    if (is_created_companion(name)) return;
    FamilyState& state = family(name);
    if (keyword == "HELP") {
      if (state.helped) in.fail("second HELP line for " + name);
      state.helped = true;
      state.family.help = in.escaped_text(false);
      return;
    }
    const std::string_view type = in.token();
    in.skip_blanks();
    if (!in.at_end()) in.fail("unexpected text after the type of " + name);
    if (state.typed) in.fail("second TYPE line for " + name);
    if (state.has_samples) in.fail("TYPE line for " + name + " after its samples");
    state.typed = true;
    state.family.type = type_from(type, in);
  }

  static MetricType type_from(std::string_view type, const LineReader& in) {
    if (type == "counter") return MetricType::Counter;
    if (type == "gauge") return MetricType::Gauge;
    if (type == "histogram") return MetricType::Histogram;
    if (type == "summary") return MetricType::Summary;
    if (type == "untyped") return MetricType::Untyped;
    in.fail("unknown metric type '" + std::string(type) + "'");
  }

  void sample(LineReader& in, size_t number) {
    const std::string name(in.name(true));
    if (name.empty()) in.fail("expected a metric name");
    Labels labels = in.accept('{') ? in.labels() : Labels{};
    if (in.skip_blanks() == 0) in.fail(in.at_end() ? "no value after " + name : "invalid character in " + name);
    const std::string_view value_text = in.token();
    const std::optional<double> value = parse_float(value_text);
    if (!value) in.fail("invalid value '" + std::string(value_text) + "'");
    in.skip_blanks();
    std::optional<int64_t> timestamp_ms;
    if (!in.at_end()) {
      const std::string_view stamp_text = in.token();
      int64_t stamp = 0;
      const auto [end, ec] = std::from_chars(stamp_text.data(), stamp_text.data() + stamp_text.size(), stamp);
      if (ec != std::errc() || end != stamp_text.data() + stamp_text.size()) in.fail("invalid timestamp '" + std::string(stamp_text) + "'");
      in.skip_blanks();
      if (!in.at_end()) in.fail("unexpected text after the timestamp");
      timestamp_ms = stamp;
    }
    route(name, {std::move(labels), *value, timestamp_ms}, in, number);
  }

  // Puts a sample into its family: a histogram's or summary's suffixed lines go to the base family.
  void route(const std::string& name, MetricSample sample, const LineReader& in, size_t number) {
    for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (!name.ends_with(suffix)) continue;
      const auto base = index_.find(name.substr(0, name.size() - suffix.size()));
      if (base == index_.end()) continue;
      FamilyState& state = families_[base->second];
      const MetricType type = state.family.type;
      if (type == MetricType::Histogram || (type == MetricType::Summary && suffix != "_bucket")) {
        state.has_samples = true;
        return series_part(state, suffix, std::move(sample.labels), sample.value, in, number);
      }
    }
    if (is_created_companion(name)) return;
    FamilyState& state = family(name);
    state.has_samples = true;
    switch (state.family.type) {
      case MetricType::Histogram: in.fail("histogram " + name + " sample without a _bucket, _sum or _count suffix");
      case MetricType::Summary: return series_part(state, "", std::move(sample.labels), sample.value, in, number);
      default: state.family.samples.push_back(std::move(sample));
    }
  }

  // A _bucket, _sum or _count line of a histogram, or a quantile (no suffix), _sum or _count line of a summary.
  void series_part(FamilyState& state, std::string_view suffix, Labels labels, double value, const LineReader& in, size_t number) {
    const bool histogram = state.family.type == MetricType::Histogram;
    const char* bound_label = histogram ? "le" : "quantile";
    std::optional<double> bound;
    std::string bound_text;
    if (suffix == "_bucket" || suffix.empty()) {
      const auto it = labels.find(bound_label);
      if (it == labels.end()) in.fail(std::string("no ") + bound_label + " label on a " + metric_type_name(state.family.type) + " line");
      bound_text = it->second;
      bound = parse_float(bound_text);
      if (!bound) in.fail(std::string("invalid ") + bound_label + " value '" + bound_text + "'");
      labels.erase(it);
    }
    auto [slot, added] = state.series.emplace(labels, histogram ? state.family.histograms.size() : state.family.summaries.size());
    if (added) {
      state.series_lines[labels] = number;
      if (histogram) state.family.histograms.push_back({labels, {}, kNaN, kNaN});
      else state.family.summaries.push_back({labels, {}, kNaN, kNaN});
    }
    double& sum = histogram ? state.family.histograms[slot->second].sum : state.family.summaries[slot->second].sum;
    double& count = histogram ? state.family.histograms[slot->second].count : state.family.summaries[slot->second].count;
    if (suffix == "_sum") {
      sum = value;
    } else if (suffix == "_count") {
      count = value;
    } else if (histogram) {
      auto& buckets = state.family.histograms[slot->second].buckets;
      const bool repeated = std::any_of(buckets.begin(), buckets.end(), [&](const HistogramBucket& b) { return b.upper_bound == *bound; });
      if (repeated) in.fail("second bucket le=\"" + bound_text + "\" for " + state.family.name + labels_text(labels));
      buckets.push_back({*bound, value});
    } else {
      state.family.summaries[slot->second].quantiles.push_back({*bound, value});
    }
  }

  void finish_series(FamilyState& state) {
    for (HistogramSeries& h : state.family.histograms) {
      std::sort(h.buckets.begin(), h.buckets.end(), [](const HistogramBucket& a, const HistogramBucket& b) { return a.upper_bound < b.upper_bound; });
      if (h.buckets.empty() || !std::isinf(h.buckets.back().upper_bound)) {
        throw std::runtime_error("metrics line " + std::to_string(state.series_lines[h.labels]) + ": histogram " + state.family.name +
                                 labels_text(h.labels) + " has no le=\"+Inf\" bucket");
      }
      if (std::isnan(h.count)) h.count = h.buckets.back().cumulative_count;
    }
    for (SummarySeries& s : state.family.summaries) {
      std::sort(s.quantiles.begin(), s.quantiles.end(), [](const SummaryQuantile& a, const SummaryQuantile& b) { return a.quantile < b.quantile; });
    }
  }

  FamilyState& family(const std::string& name) {
    const auto [it, added] = index_.emplace(name, families_.size());
    if (added) {
      families_.emplace_back();
      families_.back().family.name = name;
    }
    return families_[it->second];
  }

  // NAME_created beside a counter, histogram or summary NAME (or NAME_total): its creation time.
  bool is_created_companion(const std::string& name) const {
    constexpr std::string_view suffix = "_created";
    if (!name.ends_with(suffix)) return false;
    const std::string base = name.substr(0, name.size() - suffix.size());
    for (const std::string& candidate : {base, base + "_total"}) {
      const auto it = index_.find(candidate);
      if (it != index_.end() && families_[it->second].family.type != MetricType::Gauge &&
          families_[it->second].family.type != MetricType::Untyped) {
        return true;
      }
    }
    return false;
  }

  std::vector<FamilyState> families_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace

std::vector<MetricFamily> parse_prometheus_text(std::string_view body) {
  TextParser parser;
  size_t number = 1;
  size_t start = 0;
  while (start < body.size()) {
    const size_t end = body.find('\n', start);
    if (end == std::string_view::npos) {
      LineReader(body.substr(start), number).fail("the body ends without a newline, so its last line may be cut short");
    }
    parser.line(body.substr(start, end - start), number);
    start = end + 1;
    ++number;
  }
  return parser.finish();
}

}  // namespace inferscope
