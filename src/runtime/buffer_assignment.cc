// BufferAssignment (buffer_assignment.h): liveness over item order, first-fit arena reuse,
// in-place and aliasing outputs, dying operands of in-place results placed in the result.
#include "src/runtime/buffer_assignment.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_set>

#include "src/util/str_cat.h"

namespace accy {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

StatusOr<int64_t> AlignedBytes(const Value& value) {
  auto bytes = value.type().ByteSize();
  if (!bytes.ok() || *bytes > static_cast<uint64_t>(kNever - BufferAssignment::kAlignment)) {
    return absl::OutOfRangeError(
        StrCat("buffer assignment: ", value.type().ToString(), " has a byte size that, aligned to ",
               BufferAssignment::kAlignment, " bytes, overflows a signed 64-bit offset"));
  }
  int64_t b = static_cast<int64_t>(*bytes);
  return (b + BufferAssignment::kAlignment - 1) / BufferAssignment::kAlignment *
         BufferAssignment::kAlignment;
}

// First-fit allocator over [0, high_water) with coalescing free intervals.
class ArenaAllocator {
 public:
  // A zero-byte value (a tensor with a 0 dim) takes no space: offset 0, and freeing it is a
  // no-op, so it never lands in the free list beside a real interval at the same offset.
  int64_t Allocate(int64_t bytes) {
    if (bytes == 0) return 0;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= bytes) {
        int64_t offset = it->first, size = it->second;
        free_.erase(it);
        if (size > bytes) free_[offset + bytes] = size - bytes;
        return offset;
      }
    }
    // Extend the arena, merging a free tail interval if there is one.
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == high_water_) {
        int64_t offset = last->first;
        free_.erase(last);
        high_water_ = offset + bytes;
        return offset;
      }
    }
    int64_t offset = high_water_;
    high_water_ += bytes;
    return offset;
  }
  void Free(int64_t offset, int64_t bytes) {
    if (bytes == 0) return;
    auto [it, inserted] = free_.emplace(offset, bytes);
    ACCY_CHECK(inserted);
    auto next = std::next(it);
    if (next != free_.end() && offset + bytes == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t high_water() const { return high_water_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t high_water_ = 0;
};

// An arena region shared by the values that alias it or were written in place over it.
struct ArenaRegion {
  int64_t offset = 0;
  int64_t bytes = 0;
  int64_t last_use = -1;  // last item that reads any value living here
  bool freed = false;
};

}  // namespace

StatusOr<BufferAssignment> BufferAssignment::Assign(const Function& function,
                                                    std::span<const ItemBuffers> items) {
  BufferAssignment out;
  const Block& entry = *function.entry_block();
  const Operation* ret = entry.terminator();
  if (ret == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("buffer assignment: function '", function.name(), "' has no return"));
  }
  std::unordered_map<const Value*, int64_t> result_of;  // first result position of a value
  for (int64_t r = 0; r < ret->num_operands(); ++r) result_of.emplace(ret->operand(r), r);
  for (int64_t p = 0; p < entry.num_arguments(); ++p) {
    const Value* param = entry.argument(p);
    out.slices_[param] = {BufferSlice::Kind::kParameter, p, 0,
                          static_cast<int64_t>(*param->type().ByteSize())};
  }
  auto add_constant = [&](const Value* value) -> Status {
    if (out.slices_.count(value)) return absl::OkStatus();
    ACCY_ASSIGN_OR_RETURN(int64_t aligned, AlignedBytes(*value));
    out.slices_[value] = {BufferSlice::Kind::kConstant, 0, out.constant_bytes_,
                          static_cast<int64_t>(*value->type().ByteSize())};
    out.constants_.emplace_back(value, out.constant_bytes_);
    out.constant_bytes_ += aligned;
    return absl::OkStatus();
  };

  // Liveness: the last item reading each value; returned values live to the end.
  std::unordered_map<const Value*, int64_t> last_use;
  std::unordered_map<const Value*, int64_t> producer;
  for (size_t i = 0; i < items.size(); ++i) {
    for (const Value* input : items[i].inputs) {
      bool known = out.slices_.count(input) || producer.count(input);
      if (!known) {
        const Operation* def = input->defining_op();
        if (def == nullptr || def->kind() != OpKind::kConstant) {
          return absl::InvalidArgumentError(StrCat(
              "buffer assignment: item ", i, " reads a ", input->type().ToString(),
              " value that is neither a parameter, a constant nor an earlier item's output"));
        }
        ACCY_RETURN_IF_ERROR(add_constant(input));
      }
      last_use[input] = static_cast<int64_t>(i);
    }
    for (const Value* output : items[i].outputs) {
      if (!producer.emplace(output, static_cast<int64_t>(i)).second) {
        return absl::InvalidArgumentError(
            StrCat("buffer assignment: item ", i, " writes a value an earlier item wrote"));
      }
    }
  }
  for (const auto& [value, r] : result_of) last_use[value] = kNever;

  // Operands placed in a result's buffer from the start: an output that is a result and computes
  // in place over an operand (output_in_place_on: an all_reduce of a gradient the function
  // returns) would otherwise get the caller's buffer while the operand sits in the arena, and
  // its kernel would copy the operand across first. Only an operand some item writes (not a
  // parameter or constant, not a reshape's view), read last by this item, once, of the same
  // size, with no reshape viewing it, that is no result itself and whose producer does not
  // compute it in place over an operand of its own; one such operand per result.
  std::unordered_map<const Value*, int64_t> result_home;
  std::unordered_set<const Value*> viewed;  // inputs of aliasing items (reshapes)
  std::unordered_set<int64_t> homed_results;
  for (const ItemBuffers& item : items) {
    if (item.output_aliases_input && !item.inputs.empty()) viewed.insert(item.inputs[0]);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const ItemBuffers& item = items[i];
    for (size_t o = 0; o < item.output_in_place_on.size() && o < item.outputs.size(); ++o) {
      const int on = item.output_in_place_on[o];
      auto result = result_of.find(item.outputs[o]);
      if (on < 0 || static_cast<size_t>(on) >= item.inputs.size() || result == result_of.end() ||
          homed_results.count(result->second) != 0 || (o == 0 && item.output_aliases_input)) {
        continue;
      }
      const Value* input = item.inputs[static_cast<size_t>(on)];
      auto made = producer.find(input);
      if (made == producer.end() || result_of.count(input) != 0 || viewed.count(input) != 0 ||
          last_use.at(input) != static_cast<int64_t>(i) ||
          std::count(item.inputs.begin(), item.inputs.end(), input) != 1 ||
          input->type().ByteSize() != item.outputs[o]->type().ByteSize()) {
        continue;
      }
      const ItemBuffers& writer = items[static_cast<size_t>(made->second)];
      const size_t slot = static_cast<size_t>(
          std::find(writer.outputs.begin(), writer.outputs.end(), input) - writer.outputs.begin());
      if ((slot == 0 && writer.output_aliases_input) ||
          (slot < writer.output_in_place_on.size() && writer.output_in_place_on[slot] >= 0)) {
        continue;
      }
      result_home.emplace(input, result->second);
      homed_results.insert(result->second);
    }
  }

  // Arena placement in item order.
  ArenaAllocator arena;
  std::vector<ArenaRegion> regions;
  std::unordered_map<const Value*, size_t> region_of;
  std::vector<size_t> live;  // regions not yet freed
  int64_t max_live = 0;
  auto use_of = [&](const Value* v) {
    auto it = last_use.find(v);
    return it == last_use.end() ? -1 : it->second;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const int64_t now = static_cast<int64_t>(i);
    // Free regions whose every value was last read before this item.
    for (auto it = live.begin(); it != live.end();) {
      ArenaRegion& region = regions[*it];
      if (region.last_use < now) {
        arena.Free(region.offset, region.bytes);
        region.freed = true;
        it = live.erase(it);
      } else {
        ++it;
      }
    }
    const ItemBuffers& item = items[i];
    for (size_t o = 0; o < item.outputs.size(); ++o) {
      const Value* output = item.outputs[o];
      int64_t bytes = static_cast<int64_t>(*output->type().ByteSize());
      auto result = result_of.find(output);
      bool is_result = result != result_of.end();
      if (o == 0 && item.output_aliases_input && !item.inputs.empty()) {
        const BufferSlice& source = out.slices_.at(item.inputs[0]);
        if (!is_result) {
          out.slices_[output] = {source.kind, source.index, source.offset, bytes};
          auto region = region_of.find(item.inputs[0]);
          if (region != region_of.end()) {
            region_of[output] = region->second;
            ArenaRegion& shared = regions[region->second];
            shared.last_use = std::max(shared.last_use, use_of(output));
          }
          continue;
        }
      }
      if (is_result) {
        out.slices_[output] = {BufferSlice::Kind::kResult, result->second, 0, bytes};
        continue;
      }
      if (auto home = result_home.find(output); home != result_home.end()) {
        out.slices_[output] = {BufferSlice::Kind::kResult, home->second, 0, bytes};
        continue;
      }
      const int in_place_on = o < item.output_in_place_on.size() ? item.output_in_place_on[o] : -1;
      if (in_place_on >= 0 && static_cast<size_t>(in_place_on) < item.inputs.size()) {
        const Value* input = item.inputs[static_cast<size_t>(in_place_on)];
        auto region = region_of.find(input);
        // Another operand living in the same memory (the same value, or a reshape alias of it)
        // would be read after the kernel overwrote it.
        bool shared = false;
        for (size_t k = 0; k < item.inputs.size() && region != region_of.end(); ++k) {
          if (k == static_cast<size_t>(in_place_on)) continue;
          auto other = region_of.find(item.inputs[k]);
          shared = shared || item.inputs[k] == input ||
                   (other != region_of.end() && other->second == region->second);
        }
        if (region != region_of.end() && !shared) {
          ArenaRegion& candidate = regions[region->second];
          if (!candidate.freed && candidate.last_use == now &&
              out.slices_.at(input).bytes == bytes) {
            out.slices_[output] = {BufferSlice::Kind::kArena, 0, candidate.offset, bytes};
            region_of[output] = region->second;
            candidate.last_use = std::max(now, use_of(output));
            continue;
          }
        }
      }
      if (o == 0 && item.may_write_in_place) {
        bool placed = false;
        for (size_t k = 0; k < item.inputs.size(); ++k) {
          const Value* input = item.inputs[k];
          if (k < item.in_place_candidates.size() && !item.in_place_candidates[k]) continue;
          auto region = region_of.find(input);
          if (region == region_of.end()) continue;
          ArenaRegion& candidate = regions[region->second];
          if (candidate.freed || candidate.last_use != now ||
              out.slices_.at(input).bytes != bytes) {
            continue;
          }
          out.slices_[output] = {BufferSlice::Kind::kArena, 0, candidate.offset, bytes};
          region_of[output] = region->second;
          candidate.last_use = std::max(now, use_of(output));
          placed = true;
          break;
        }
        if (placed) continue;
      }
      ACCY_ASSIGN_OR_RETURN(int64_t aligned, AlignedBytes(*output));
      ArenaRegion region{arena.Allocate(aligned), aligned, std::max(now, use_of(output)), false};
      out.slices_[output] = {BufferSlice::Kind::kArena, 0, region.offset, bytes};
      region_of[output] = regions.size();
      live.push_back(regions.size());
      regions.push_back(region);
      max_live = std::max<int64_t>(max_live, static_cast<int64_t>(live.size()));
    }
  }
  out.arena_bytes_ = arena.high_water();
  out.arena_buffer_count_ = max_live;

  // Results not written in place by their producing item are copied after the run.
  for (int64_t r = 0; r < ret->num_operands(); ++r) {
    const Value* value = ret->operand(r);
    auto slice = out.slices_.find(value);
    if (slice == out.slices_.end()) {
      const Operation* def = value->defining_op();
      if (def == nullptr || def->kind() != OpKind::kConstant) {
        return absl::InvalidArgumentError(
            StrCat("buffer assignment: result ", r, " is not produced by any work item"));
      }
      ACCY_RETURN_IF_ERROR(add_constant(value));
      slice = out.slices_.find(value);
    }
    const BufferSlice& s = slice->second;
    if (s.kind != BufferSlice::Kind::kResult || s.index != r) out.result_copies_.emplace_back(r, s);
  }
  return out;
}

const BufferSlice* BufferAssignment::SliceOf(const Value* value) const {
  auto it = slices_.find(value);
  return it == slices_.end() ? nullptr : &it->second;
}

std::string BufferAssignment::ToString() const {
  static constexpr const char* kKinds[] = {"parameter", "result", "constant", "arena"};
  std::vector<std::string> lines;
  for (const auto& [value, slice] : slices_) {
    lines.push_back(StrCat(value->type().ToString(), " id=", value->id(), " -> ",
                           kKinds[static_cast<int>(slice.kind)], " ", slice.index, " +",
                           slice.offset, " (", slice.bytes, " B)"));
  }
  std::sort(lines.begin(), lines.end());
  std::string text = StrCat("arena ", arena_bytes_, " B, constants ", constant_bytes_, " B\n");
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace accy
