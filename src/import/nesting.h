// The importer's recursion bounds: a counter of nested calls, raised while a Nesting lives.
#pragma once

namespace kernrl::kbimport {

class Nesting {
 public:
  explicit Nesting(int& depth, int by = 1) : depth_(depth), by_(by) { depth_ += by_; }
  ~Nesting() { depth_ -= by_; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;

 private:
  int& depth_;
  int by_;
};

}  // namespace kernrl::kbimport
