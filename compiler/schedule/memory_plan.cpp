/// \file
/// Memory planning: every Arena buffer gets a byte offset in one arena per
/// model instance. Buffers whose lifetimes (first write to last read, in
/// kernel order) do not overlap share a slot when one provably fits in the
/// other for every symbol value; slot offsets are symbolic prefix sums.
#include "compiler/schedule/schedule.h"

#include <map>

namespace aotc {

namespace {

Expr alignUp(const Expr &bytes, int64_t a) {
  return floorDiv(bytes + Expr(a - 1), Expr(a)) * Expr(a);
}

struct Slot {
  Expr size;
  int freeAfter = -1; ///< last kernel that reads the current occupant
};

} // namespace

void planMemory(LoopModule &m, const RangeEnv &env) {
  // Lifetimes of arena buffers in kernel order.
  std::map<std::string, std::pair<int, int>> life;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    for (const KernelBuffer &b : m.kernels[k].buffers) {
      const ModuleBuffer *mb = m.findBuffer(b.name);
      if (!mb || mb->role != BufferRole::Arena)
        continue;
      auto it = life.find(b.name);
      if (it == life.end())
        life[b.name] = {static_cast<int>(k), static_cast<int>(k)};
      else
        it->second.second = static_cast<int>(k);
    }
  }
  // Assign in order of first use.
  std::vector<std::pair<int, std::string>> order;
  for (auto &[name, l] : life)
    order.emplace_back(l.first, name);
  std::sort(order.begin(), order.end());

  std::vector<Slot> slots;
  std::map<std::string, size_t> slotOf;
  for (auto &[first, name] : order) {
    ModuleBuffer *b = nullptr;
    for (ModuleBuffer &mb : m.buffers)
      if (mb.name == name)
        b = &mb;
    Expr size = simplify(b->plannedBytes(), env);
    int last = life[name].second;
    int chosen = -1;
    // First a free slot that already fits, then one that can grow.
    for (size_t s = 0; s < slots.size() && chosen < 0; ++s)
      if (slots[s].freeAfter < first && proveLE(size, slots[s].size, env))
        chosen = static_cast<int>(s);
    for (size_t s = 0; s < slots.size() && chosen < 0; ++s)
      if (slots[s].freeAfter < first && proveLE(slots[s].size, size, env)) {
        chosen = static_cast<int>(s);
        slots[s].size = size;
      }
    if (chosen < 0) {
      slots.push_back(Slot{size, -1});
      chosen = static_cast<int>(slots.size()) - 1;
    }
    slots[chosen].freeAfter = last;
    slotOf[name] = static_cast<size_t>(chosen);
  }
  std::vector<Expr> offsets;
  Expr offset = Expr(0);
  for (const Slot &s : slots) {
    offsets.push_back(offset);
    offset =
        simplify(offset + alignUp(s.size, LoopModule::kArenaAlignment), env);
  }
  for (ModuleBuffer &b : m.buffers)
    if (b.role == BufferRole::Arena)
      b.arenaOffset = slotOf.count(b.name) ? offsets[slotOf[b.name]] : Expr(0);
  m.arenaBytes = offset;
}

} // namespace aotc
