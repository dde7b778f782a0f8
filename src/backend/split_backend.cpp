#include "backend/split_backend.h"

#include <string>

#include "backend/buffer.h"
#include "backend/graph.h"

namespace paddock {

namespace {

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
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after) override {
    for (size_t i = 0; i < nodes.size(); ++i) PADDOCK_TRY(check_supported(at(nodes[i]), nodes.subspan(i, 1)));
    for (size_t first = 0; first < nodes.size();) {
      Backend& b = at(nodes[first]);
      size_t end = first + 1;
      while (end < nodes.size() && &at(nodes[end]) == &b) ++end;
      PADDOCK_TRY(b.run_nodes(nodes.subspan(first, end - first), after));
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
