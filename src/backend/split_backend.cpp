#include "backend/split_backend.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backend/buffer.h"
#include "backend/graph.h"

namespace paddock {

namespace {

bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.buffer == nullptr || a.buffer != b.buffer) return false;
  return a.offset < b.offset + b.extent() && b.offset < a.offset + a.extent();
}

// The outputs of `run` that a later node or the caller reads.
std::vector<TensorView> read_after(std::span<const Node> run, std::span<const Node> later,
                                   std::span<const TensorView> results) {
  std::vector<TensorView> out;
  for (const Node& n : run) {
    const bool read = std::any_of(later.begin(), later.end(), [&](const Node& l) {
      return std::any_of(l.src.begin(), l.src.begin() + l.n_src, [&](const TensorView& s) { return overlaps(n.dst, s); });
    }) || std::any_of(results.begin(), results.end(), [&](const TensorView& r) { return overlaps(n.dst, r); });
    if (read) out.push_back(n.dst);
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
  Backend& for_layer(int64_t layer) override { return *backends_[static_cast<size_t>(placement_.backend(layer))]; }
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
