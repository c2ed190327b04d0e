// Incremental server-sent events parser (WHATWG HTML, "Interpreting an event stream"): fed bytes as
// they arrive from a socket, in chunks split anywhere, it returns each event when its blank line comes.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

struct SseEvent {
  std::string type = "message";  // the event: field, "message" when there was none
  std::string data;              // the data: lines joined with "\n"
  std::string last_event_id;     // the last id: field seen so far in the stream (it persists)
  // Values of the non-standard fields the parser was asked to keep (joined with "\n" like data).
  std::map<std::string, std::string> extra_fields;
};

class SseParser {
 public:
  // `extra_fields` names non-standard fields to keep instead of ignoring them (llama-server once sent
  // errors as an `error:` line); an event holding one is dispatched even without data.
  explicit SseParser(std::vector<std::string> extra_fields = {});

  // Appends bytes (any split: mid-line, between "\r" and "\n"); returns the events completed by them.
  std::vector<SseEvent> feed(std::string_view bytes);

  // End of stream. As the spec says, an event without its closing blank line is discarded: returns the
  // discarded text (its lines since the last event, "\n"-separated), or nullopt when the stream ended
  // between events. The parser is then ready for a new stream (the last event id is kept).
  std::optional<std::string> finish();

  // The last valid retry: field (reconnection time in milliseconds), if any.
  std::optional<long long> retry_ms() const { return retry_ms_; }

 private:
  void end_line(std::vector<SseEvent>& out);
  void process_field(std::string_view field, std::string_view value);
  void dispatch(std::vector<SseEvent>& out);

  std::vector<std::string> extra_names_;
  std::string line_;            // the current line, not yet terminated
  bool after_cr_ = false;       // the last byte was "\r": a "\n" right after it ends no new line
  bool first_line_ = true;      // a UTF-8 byte order mark may start the first line
  std::string pending_lines_;   // field lines of the event being built, for finish()'s report
  std::string data_;
  std::string type_;
  std::string id_buffer_;
  std::string last_event_id_;
  std::map<std::string, std::string> extras_;
  std::optional<long long> retry_ms_;
};

}  // namespace inferscope
