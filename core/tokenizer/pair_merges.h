// The merge loop both tokenizers run (byte-level BPE and SentencePiece): the symbols of a piece in a
// linked list, the adjacent pairs that may merge in a priority queue, best first and the leftmost
// among equals. The best pair whose two symbols are still as they were when it was queued merges
// (the right symbol joins the left one and leaves the list), and the pairs the merged symbol now
// forms with its neighbours are queued.
#pragma once
#include <optional>
#include <queue>
#include <vector>

namespace inferscope {

// Merges symbols 0 .. n-1 (in text order) while some adjacent pair may. `rank_of(left, right)`
// gives std::optional<Rank>: nothing when the two cannot merge, else the merge, better the lower it
// compares (Rank's operator<); `join(left, right, rank)` applies it to the caller's symbol data.
// Returns the symbols left, in order.
template <class Rank, class RankOf, class Join>
std::vector<int> merge_adjacent_pairs(int n, RankOf rank_of, Join join) {
  struct Link {
    int prev, next;    // -1 at the ends
    unsigned version;  // bumped whenever the symbol merges: a queued pair that saw another is stale
  };
  struct Queued {
    Rank rank;
    int left, right;
    unsigned left_version, right_version;
  };
  std::vector<Link> links(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) links[static_cast<size_t>(i)] = {i - 1, i + 1 < n ? i + 1 : -1, 0};
  const auto worse = [](const Queued& a, const Queued& b) {
    return b.rank < a.rank || (!(a.rank < b.rank) && a.left > b.left);
  };
  std::priority_queue<Queued, std::vector<Queued>, decltype(worse)> queue(worse);
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    if (const std::optional<Rank> rank = rank_of(left, right)) {
      queue.push({*rank, left, right, links[static_cast<size_t>(left)].version, links[static_cast<size_t>(right)].version});
    }
  };
  for (int i = 1; i < n; ++i) try_pair(i - 1, i);

  while (!queue.empty()) {
    const Queued p = queue.top();
    queue.pop();
    Link& left = links[static_cast<size_t>(p.left)];
    Link& right = links[static_cast<size_t>(p.right)];
    if (left.next != p.right || left.version != p.left_version || right.version != p.right_version) continue;
    join(p.left, p.right, p.rank);
    ++left.version;
    ++right.version;
    left.next = right.next;
    if (right.next >= 0) links[static_cast<size_t>(right.next)].prev = p.left;
    try_pair(left.prev, p.left);
    try_pair(p.left, left.next);
  }

  std::vector<int> kept;
  for (int i = n > 0 ? 0 : -1; i >= 0; i = links[static_cast<size_t>(i)].next) kept.push_back(i);
  return kept;
}

}  // namespace inferscope
