// Stop strings on streamed text: text that could still become a stop string is held back, so the
// caller never shows part of one; once one appears, only the text before it comes out.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace inferscope {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Appends whole UTF-8 text; returns what can be shown now (everything before a stop string once
  // one appears: stopped() is then set and later text is ignored).
  std::string push(std::string_view text);
  // The held-back text, at the end of the stream.
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace inferscope
