#include "backend/backend.h"

#include "base/check.h"

namespace paddock {

TensorView TensorView::contiguous(void* data, DType type, std::initializer_list<int64_t> ne) {
  PADDOCK_CHECK(ne.size() >= 1 && ne.size() <= 4);
  TensorView v;
  v.data = data;
  v.type = type;
  size_t i = 0;
  for (int64_t n : ne) v.ne[i++] = n;
  const DTypeInfo& info = dtype_info(type);
  PADDOCK_CHECK(v.ne[0] % info.block_size == 0);
  v.nb[0] = info.type_size;
  v.nb[1] = static_cast<size_t>(v.ne[0] / info.block_size) * info.type_size;
  v.nb[2] = v.nb[1] * static_cast<size_t>(v.ne[1]);
  v.nb[3] = v.nb[2] * static_cast<size_t>(v.ne[2]);
  return v;
}

TensorView TensorView::in_buffer(Buffer& buffer, size_t offset, DType type,
                                 std::initializer_list<int64_t> ne) {
  TensorView v = contiguous(buffer.host() != nullptr ? buffer.host() + offset : nullptr, type, ne);
  v.buffer = &buffer;
  v.offset = offset;
  PADDOCK_CHECK(offset <= buffer.size() && v.n_bytes() <= buffer.size() - offset);
  return v;
}

size_t TensorView::n_bytes() const {
  PADDOCK_CHECK(is_contiguous());
  return nb[3] * static_cast<size_t>(ne[3]);
}

size_t TensorView::extent() const {
  const DTypeInfo& ti = dtype_info(type);
  size_t last = ti.type_size + static_cast<size_t>(ne[0] / ti.block_size - 1) * nb[0];
  for (int d = 1; d < 4; ++d) last += static_cast<size_t>(ne[d] - 1) * nb[d];
  return last;
}

bool TensorView::is_contiguous() const {
  const DTypeInfo& info = dtype_info(type);
  return nb[0] == info.type_size && nb[1] == static_cast<size_t>(ne[0] / info.block_size) * info.type_size &&
         nb[2] == nb[1] * static_cast<size_t>(ne[1]) && nb[3] == nb[2] * static_cast<size_t>(ne[2]);
}

TensorView TensorView::reshape(std::initializer_list<int64_t> new_ne) const {
  PADDOCK_CHECK(is_contiguous());
  TensorView v = contiguous(data, type, new_ne);
  v.buffer = buffer;
  v.offset = offset;
  PADDOCK_CHECK(v.n_elements() == n_elements());
  return v;
}

TensorView TensorView::shifted(size_t bytes) const {
  TensorView v = *this;
  v.offset += bytes;
  if (data != nullptr) v.data = static_cast<uint8_t*>(data) + bytes;
  return v;
}

namespace {

// Items [first, first + n) along dim 2 of a view.
TensorView slab(const TensorView& t, int64_t first, int64_t n) {
  TensorView r = t.shifted(static_cast<size_t>(first) * t.nb[2]);
  r.ne[2] = n;
  return r;
}

}  // namespace

bool attn_seqs_valid(std::span<const AttnSeq> seqs, int64_t n_tokens, int64_t n_kv) {
  if (seqs.empty()) return true;
  int64_t next = 0;
  for (const AttnSeq& s : seqs) {
    if (s.token != next || s.n_tokens < 0 || s.cell < 0 || s.n_cells < 0 || s.cell > n_kv - s.n_cells) {
      return false;
    }
    next += s.n_tokens;
  }
  return next == n_tokens;
}

std::vector<AttnSeqViews> attn_seq_views(const TensorView& q, const TensorView& k, const TensorView& v,
                                         std::span<const int32_t> pos, const AttnParams& p,
                                         const TensorView& dst) {
  if (p.seqs.empty()) return {{q, k, v, dst, pos, p}};
  PADDOCK_CHECK(attn_seqs_valid(p.seqs, q.ne[2], k.ne[2]) && static_cast<int64_t>(pos.size()) == q.ne[2]);
  std::vector<AttnSeqViews> out;
  for (const AttnSeq& s : p.seqs) {
    AttnParams one = p;
    one.seqs = {};
    if (!p.cells.empty())
      one.cells = p.cells.subspan(static_cast<size_t>(s.cell), static_cast<size_t>(s.n_cells));
    out.push_back({slab(q, s.token, s.n_tokens), slab(k, s.cell, s.n_cells), slab(v, s.cell, s.n_cells),
                   slab(dst, s.token, s.n_tokens),
                   pos.subspan(static_cast<size_t>(s.token), static_cast<size_t>(s.n_tokens)), one});
  }
  return out;
}

bool is_kv_cache_type(DType t) {
  return t == DType::kF16 || t == DType::kF32 || t == DType::kQ8_0 || t == DType::kQ4_0;
}

}  // namespace paddock
