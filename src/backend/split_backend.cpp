#include "backend/split_backend.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/buffer.h"
#include "backend/graph.h"

namespace paddock {

namespace {

// The bytes some views cover, per buffer, as sorted disjoint [begin, end) ranges, so that
// whether a view touches them is a binary search rather than a test against every input of
// every later node (a pass has hundreds of nodes, a split decode pass runs this per part).
class Ranges {
 public:
  void add(const TensorView& v) {
    if (v.buffer != nullptr && v.extent() > 0)
      by_buffer_[v.buffer].push_back({v.offset, v.offset + v.extent()});
  }
  void seal() {
    for (auto& [buffer, r] : by_buffer_) {
      std::sort(r.begin(), r.end());
      size_t out = 0;
      for (const auto& [b, e] : r) {
        if (out > 0 && b <= r[out - 1].second) {
          r[out - 1].second = std::max(r[out - 1].second, e);
        } else {
          r[out++] = {b, e};
        }
      }
      r.resize(out);
    }
  }
  bool touches(const TensorView& v) const {
    const auto it = by_buffer_.find(v.buffer);
    if (v.buffer == nullptr || it == by_buffer_.end() || v.extent() == 0) return false;
    const std::vector<std::pair<size_t, size_t>>& r = it->second;
    const size_t end = v.offset + v.extent();
    // The last range starting before v ends is the one reaching furthest (they are disjoint).
    const auto after = std::lower_bound(r.begin(), r.end(), std::pair<size_t, size_t>{end, 0});
    return after != r.begin() && std::prev(after)->second > v.offset;
  }

 private:
  std::map<const Buffer*, std::vector<std::pair<size_t, size_t>>> by_buffer_;
};

// The outputs of `run` that a later node or the caller reads.
std::vector<TensorView> read_after(std::span<const Node> run, std::span<const Node> later,
                                   std::span<const TensorView> results) {
  Ranges read;
  for (const Node& l : later) {
    for (int i = 0; i < l.n_src; ++i) read.add(l.src[static_cast<size_t>(i)]);
  }
  for (const TensorView& r : results) read.add(r);
  read.seal();
  std::vector<TensorView> out;
  for (const Node& n : run) {
    if (read.touches(n.dst)) out.push_back(n.dst);
  }
  return out;
}

class SplitBackend final : public Backend {
 public:
  SplitBackend(std::vector<std::unique_ptr<Backend>> backends, Placement placement)
      : backends_(std::move(backends)), placement_(std::move(placement)) {
    for (const auto& b : backends_) name_ += (name_.empty() ? "" : "+") + std::string(b->name());
  }

  std::string_view name() const override { return name_; }
  Device& device() override { return for_layer(-1).device(); }
  bool supports(Op op, std::span<const DType> types) const override {
    for (const auto& b : backends_) {
      if (!b->supports(op, types)) return false;
    }
    return true;
  }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView> results) override {
    for (size_t i = 0; i < nodes.size(); ++i) PADDOCK_TRY(check_supported(at(nodes[i]), nodes.subspan(i, 1)));
    for (size_t first = 0; first < nodes.size();) {
      Backend& b = at(nodes[first]);
      size_t end = first + 1;
      while (end < nodes.size() && &at(nodes[end]) == &b) ++end;
      const std::span<const Node> run = nodes.subspan(first, end - first);
      PADDOCK_TRY(b.run_nodes(run, after, read_after(run, nodes.subspan(end), results)));
      first = end;
    }
    return Status::ok();
  }
  Backend& for_layer(int64_t layer) override {
    return *backends_[static_cast<size_t>(placement_.backend(layer))];
  }
  void adopt_weight_file(std::span<const uint8_t> bytes, bool release_pages) override {
    for (const auto& b : backends_) b->adopt_weight_file(bytes, release_pages);
  }

 private:
  Backend& at(const Node& n) { return for_layer(n.layer); }

  std::vector<std::unique_ptr<Backend>> backends_;
  Placement placement_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Backend>> make_split_backend(std::vector<std::unique_ptr<Backend>> backends,
                                                    Placement placement) {
  if (backends.empty()) return invalid_argument("split backend: expected at least one backend, found none");
  for (int64_t l = -1; l <= placement.n_layer(); ++l) {
    const int i = placement.backend(l);
    if (i < 0 || static_cast<size_t>(i) >= backends.size()) {
      return invalid_argument("split backend: layer " + std::to_string(l) + " placed on backend " +
                              std::to_string(i) + " of " + std::to_string(backends.size()));
    }
  }
  if (backends[static_cast<size_t>(placement.backend(-1))]->device().kind() != DeviceKind::kHost) {
    return unsupported("split backend: the input (token embeddings) must be computed on a host backend");
  }
  return std::unique_ptr<Backend>(std::make_unique<SplitBackend>(std::move(backends), std::move(placement)));
}

}  // namespace paddock
