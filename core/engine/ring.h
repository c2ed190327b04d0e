// A fixed-capacity ring of the most recent values: long sessions keep bounded memory.
#pragma once
#include <cstddef>
#include <vector>

namespace inferscope {

template <typename T>
class Ring {
 public:
  explicit Ring(size_t capacity) : capacity_(capacity) {}
  void push(T value) {
    if (items_.size() < capacity_) {
      items_.push_back(std::move(value));
    } else {
      items_[next_] = std::move(value);  // overwrite the oldest
    }
    next_ = (next_ + 1) % capacity_;
  }
  size_t size() const { return items_.size(); }
  // Oldest first.
  std::vector<T> to_vector() const {
    if (items_.size() < capacity_) return items_;
    std::vector<T> out(items_.begin() + static_cast<std::ptrdiff_t>(next_), items_.end());
    out.insert(out.end(), items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(next_));
    return out;
  }

 private:
  size_t capacity_;
  size_t next_ = 0;
  std::vector<T> items_;
};

}  // namespace inferscope
