#include "core/remote/sse_stream.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace inferscope {

namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool all_ascii_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

SseParser::SseParser(std::vector<std::string> extra_fields) : extra_names_(std::move(extra_fields)) {}

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
  std::vector<SseEvent> out;
  for (char c : bytes) {
    const bool lf_of_crlf = after_cr_ && c == '\n';
    after_cr_ = c == '\r';
    if (lf_of_crlf) continue;
    if (c == '\r' || c == '\n') {
      end_line(out);
    } else {
      line_ += c;
    }
  }
  return out;
}

std::optional<std::string> SseParser::finish() {
  std::optional<std::string> discarded;
  if (!pending_lines_.empty() || !line_.empty()) {
    discarded = pending_lines_ + line_;
  }
  line_.clear();
  after_cr_ = false;
  first_line_ = true;
  pending_lines_.clear();
  data_.clear();
  type_.clear();
  extras_.clear();
  return discarded;
}

void SseParser::end_line(std::vector<SseEvent>& out) {
  std::string_view line = line_;
  if (first_line_ && line.starts_with(kByteOrderMark)) line.remove_prefix(kByteOrderMark.size());
  first_line_ = false;
  if (line.empty()) {
    dispatch(out);
  } else if (line.front() != ':') {  // a line starting with ':' is a comment (keep-alive)
    pending_lines_.append(line).append("\n");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      process_field(line, "");
    } else {
      std::string_view value = line.substr(colon + 1);
      if (value.starts_with(' ')) value.remove_prefix(1);  // one optional space after the colon
      process_field(line.substr(0, colon), value);
    }
  }
  line_.clear();
}

void SseParser::process_field(std::string_view field, std::string_view value) {
  if (field == "event") {
    type_ = value;
  } else if (field == "data") {
    data_.append(value).append("\n");
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_buffer_ = value;
  } else if (field == "retry") {
    long long ms = 0;
    // Digits only; a value too large for the type is ignored like any invalid one.
    if (all_ascii_digits(value) && std::from_chars(value.data(), value.data() + value.size(), ms).ec == std::errc()) {
      retry_ms_ = ms;
    }
  } else if (std::find(extra_names_.begin(), extra_names_.end(), field) != extra_names_.end()) {
    extras_[std::string(field)].append(value).append("\n");
  }
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
  last_event_id_ = id_buffer_;
  pending_lines_.clear();
  if (data_.empty() && extras_.empty()) {
    type_.clear();
    return;
  }
  // Each data line appended a "\n"; the last one is not part of the data.
  auto without_last_newline = [](std::string s) {
    if (!s.empty()) s.pop_back();
    return s;
  };
  SseEvent event;
  if (!type_.empty()) event.type = type_;
  event.data = without_last_newline(std::move(data_));
  event.last_event_id = last_event_id_;
  for (auto& [name, value] : extras_) event.extra_fields[name] = without_last_newline(std::move(value));
  out.push_back(std::move(event));
  data_.clear();
  type_.clear();
  extras_.clear();
}

}  // namespace inferscope
