// EliminateCommonSubexpressionsPass (eliminate_common_subexpressions.h).
#include "src/transforms/eliminate_common_subexpressions.h"

#include <bit>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "src/transforms/eliminate_dead_code.h"
#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

// Bytes of a constant payload that enter the hash (equality compares all of them).
constexpr size_t kHashedPayloadBytes = 256;

uint64_t Mix(uint64_t hash, uint64_t value) {
  // boost::hash_combine's mixing, widened to 64 bits.
  return hash ^ (value + 0x9e3779b97f4a7c15ull + (hash << 12) + (hash >> 4));
}

uint64_t HashString(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : text) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

uint64_t HashType(const TensorType& type) {
  uint64_t hash = static_cast<uint64_t>(type.element_type());
  for (int64_t dim : type.dims()) hash = Mix(hash, static_cast<uint64_t>(dim));
  return hash;
}

uint64_t HashAttribute(const AttributeValue& value) {
  uint64_t hash = value.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          hash = Mix(hash, static_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, double>) {
          hash = Mix(hash, std::bit_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, bool>) {
          hash = Mix(hash, v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          hash = Mix(hash, HashString(v));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t x : v) hash = Mix(hash, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const std::string& x : v) hash = Mix(hash, HashString(x));
        } else {
          hash = Mix(hash, HashType(v.type));
          hash = Mix(hash, v.bytes.size());
          const size_t n = std::min(v.bytes.size(), kHashedPayloadBytes);
          hash = Mix(hash, HashString(std::string_view(
                               reinterpret_cast<const char*>(v.bytes.data()), n)));
        }
      },
      value);
  return hash;
}

// Ops with regions merge only when every nested op is region-free and there are at most this
// many of them (reduce, scatter and sort bodies are a handful): a comparison visits each nested
// op once, so the cap bounds its cost.
constexpr size_t kMaxMergeableRegionOps = 64;
// Candidates with the same hash an op is compared with, at most (a hash collision chain of
// equal-looking ops with different bodies cannot make the pass quadratic).
constexpr int kMaxComparisons = 4;

// Order-independent over attributes (XOR of per-attribute hashes): attribute order carries no
// meaning. Nested ops enter by kind and count only (operands inside are compared, not hashed).
uint64_t HashOperation(const Operation& op) {
  uint64_t hash = static_cast<uint64_t>(op.kind());
  for (const Value* operand : op.operands()) {
    hash = Mix(hash, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(operand)));
  }
  for (const Value* result : op.results()) hash = Mix(hash, HashType(result->type()));
  uint64_t attributes = 0;
  for (const NamedAttribute& attribute : op.attributes()) {
    attributes ^= Mix(HashString(attribute.name), HashAttribute(attribute.value));
  }
  hash = Mix(hash, attributes);
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    for (const auto& block : op.region(r)->blocks()) {
      hash = Mix(hash, static_cast<uint64_t>(block->num_arguments()));
      for (const auto& nested : block->operations()) {
        hash = Mix(hash, static_cast<uint64_t>(nested->kind()));
      }
    }
  }
  return hash;
}

bool SameAttributeValue(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  // Floats by their bits: -0.0 and 0.0 differ, a NaN equals the same NaN.
  if (std::holds_alternative<double>(a)) {
    return std::bit_cast<uint64_t>(std::get<double>(a)) ==
           std::bit_cast<uint64_t>(std::get<double>(b));
  }
  return a == b;
}

// True when every region of `op` holds only region-free ops, at most kMaxMergeableRegionOps.
bool SmallFlatRegions(const Operation& op) {
  size_t count = 0;
  for (int64_t r = 0; r < op.num_regions(); ++r) {
    for (const auto& block : op.region(r)->blocks()) {
      for (const auto& nested : block->operations()) {
        if (nested->num_regions() != 0 || ++count > kMaxMergeableRegionOps) return false;
      }
    }
  }
  return true;
}

bool Mergeable(const Operation& op) { return IsRemovableWhenUnused(op) && SmallFlatRegions(op); }

// Values of `a`'s regions -> the values of `b`'s regions in the same place.
using ValueMap = std::unordered_map<const Value*, const Value*>;

const Value* Mapped(const Value* value, const ValueMap& map) {
  auto found = map.find(value);
  return found == map.end() ? value : found->second;
}

// ComputeTheSame with `a`'s operands read through `map` (a value of a's regions stands for the
// value of b's in the same place; anything else, from outside both, for itself).
bool SameOp(const Operation& a, const Operation& b, ValueMap& map);

// Regions in the same place compute the same thing: the same blocks with arguments of the same
// types, and pairwise the same ops (SameOp), in order, their results mapped as they go.
bool SameRegions(const Operation& a, const Operation& b, ValueMap& map) {
  if (a.num_regions() != b.num_regions()) return false;
  for (int64_t r = 0; r < a.num_regions(); ++r) {
    const auto& a_blocks = a.region(r)->blocks();
    const auto& b_blocks = b.region(r)->blocks();
    if (a_blocks.size() != b_blocks.size()) return false;
    for (size_t k = 0; k < a_blocks.size(); ++k) {
      const Block& x = *a_blocks[k];
      const Block& y = *b_blocks[k];
      if (x.num_arguments() != y.num_arguments() ||
          x.operations().size() != y.operations().size()) {
        return false;
      }
      for (int64_t i = 0; i < x.num_arguments(); ++i) {
        if (!(x.argument(i)->type() == y.argument(i)->type())) return false;
        map[x.argument(i)] = y.argument(i);
      }
      for (size_t i = 0; i < x.operations().size(); ++i) {
        const Operation& p = *x.operations()[i];
        const Operation& q = *y.operations()[i];
        if (!SameOp(p, q, map)) return false;
        for (int64_t res = 0; res < p.num_results(); ++res) map[p.result(res)] = q.result(res);
      }
    }
  }
  return true;
}

bool SameOp(const Operation& a, const Operation& b, ValueMap& map) {
  if (a.kind() != b.kind() || a.num_operands() != b.num_operands() ||
      a.num_results() != b.num_results() || a.attributes().size() != b.attributes().size()) {
    return false;
  }
  for (int64_t i = 0; i < a.num_operands(); ++i) {
    if (Mapped(a.operand(i), map) != b.operand(i)) return false;
  }
  for (int64_t r = 0; r < a.num_results(); ++r) {
    if (!(a.result(r)->type() == b.result(r)->type())) return false;
  }
  for (const NamedAttribute& attribute : a.attributes()) {
    const AttributeValue* other = b.attribute(attribute.name);
    if (other == nullptr || !SameAttributeValue(attribute.value, *other)) return false;
  }
  return SameRegions(a, b, map);
}

// A scoped table: the ops of the enclosing blocks (visible in nested regions) and of this one.
using Table = std::unordered_multimap<uint64_t, Operation*>;

int64_t MergeBlock(Block& block, Table& table) {
  int64_t erased = 0;
  // This block's entries, removed when it is done (as keys: a rehash invalidates iterators).
  std::vector<std::pair<uint64_t, Operation*>> added;
  for (size_t i = 0; i < block.operations().size();) {
    Operation* op = block.operations()[i].get();
    if (!Mergeable(*op)) {
      // while and case bodies are outlined and may read the enclosing blocks' values; every
      // other body is compiled as a function of its arguments (sink-constants-into-regions), so
      // it merges only within itself: replacing its op by an enclosing one would capture.
      const bool outlined = op->kind() == OpKind::kWhile || op->kind() == OpKind::kCase;
      for (int64_t r = 0; r < op->num_regions(); ++r) {
        for (const auto& nested : op->region(r)->blocks()) {
          Table own;
          erased += MergeBlock(*nested, outlined ? table : own);
        }
      }
      ++i;
      continue;
    }
    const uint64_t hash = HashOperation(*op);
    Operation* earlier = nullptr;
    auto [first, last] = table.equal_range(hash);
    int comparisons = 0;
    for (auto it = first; it != last && comparisons < kMaxComparisons; ++it, ++comparisons) {
      if (ComputeTheSame(*it->second, *op)) {
        earlier = it->second;
        break;
      }
    }
    if (earlier == nullptr) {
      table.emplace(hash, op);
      added.emplace_back(hash, op);
      ++i;
      continue;
    }
    for (int64_t r = 0; r < op->num_results(); ++r) {
      op->result(r)->ReplaceAllUsesWith(earlier->result(r));
    }
    block.Erase(op);
    ++erased;
  }
  for (const auto& [hash, op] : added) {
    auto [first, last] = table.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (it->second == op) {
        table.erase(it);
        break;
      }
    }
  }
  return erased;
}

StatusOr<passes::WorkBounds> EstimateWork(const Function& function) {
  ACCY_ASSIGN_OR_RETURN(passes::Census census, passes::Census::Inspect(function));
  passes::WorkBounds bounds;
  ACCY_ASSIGN_OR_RETURN(uint64_t visits, passes::WorkAdd(census.operations, census.operands));
  // Each op is compared with at most kMaxComparisons others; a comparison visits the op, its
  // operands and its regions' ops and operands, each of which belongs to one op.
  ACCY_ASSIGN_OR_RETURN(uint64_t compared, passes::WorkMul(visits, kMaxComparisons + 1));
  ACCY_ASSIGN_OR_RETURN(bounds.work.structural_visits, passes::WorkAdd(compared, census.atoms));
  // Constant payloads: read once to hash and once per comparison.
  ACCY_ASSIGN_OR_RETURN(bounds.work.input_bytes,
                        passes::WorkMul(census.input_bytes, kMaxComparisons + 1));
  // An entry (hash, pointer and node links) per op, and one comparison's value map (a few
  // hundred entries at most: the regions' arguments and results).
  ACCY_ASSIGN_OR_RETURN(uint64_t entries, passes::WorkMul(census.operations, 64));
  ACCY_ASSIGN_OR_RETURN(bounds.workspace_bytes,
                        passes::WorkAdd(entries, kMaxMergeableRegionOps * 4 * 64));
  bounds.work.allocation_capacity = bounds.workspace_bytes;
  return bounds;
}

}  // namespace

bool ComputeTheSame(const Operation& a, const Operation& b) {
  if (!SmallFlatRegions(a) || !SmallFlatRegions(b)) return false;
  ValueMap map;
  return SameOp(a, b, map);
}

int64_t EliminateCommonSubexpressions(Function& function) {
  Table table;
  return MergeBlock(*function.entry_block(), table);
}

const passes::WorkContract& EliminateCommonSubexpressionsPass::contract() const {
  static const passes::WorkContract kContract{{kName, 2}, &EstimateWork};
  return kContract;
}

Status EliminateCommonSubexpressionsPass::Run(passes::PassContext& context) {
  return FinishRewrite(context, EliminateCommonSubexpressions(context.function()));
}

}  // namespace accy
