// Tokens a server counts only when their request ends (llama-server's, SGLang's generated tokens),
// drawn over the time the requests took instead of as one spike at the scrape that saw them end: each
// batch of ended requests' tokens is handed out at its own rate, tokens / the time they took, over
// the following scrape intervals until all are given out. Totals are kept: every token is handed out once.
#pragma once
#include <vector>

namespace inferscope {

class RequestEndSpread {
 public:
  // `tokens` counted at a scrape for requests that took `seconds` together (<= 0: unknown, all at once).
  void add(double tokens, double seconds);
  // The tokens to draw in an interval of `seconds` ending now.
  double take(double seconds);
  // Tokens counted but not handed out yet.
  double pending() const;

 private:
  struct Batch {
    double tokens_left = 0;
    double tokens_per_second = 0;  // 0: all at the next take
  };
  std::vector<Batch> batches_;
};

}  // namespace inferscope
