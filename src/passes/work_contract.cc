// Census of a function's IR and the checked arithmetic every estimate uses (work_contract.h).
#include "src/passes/work_contract.h"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "src/util/str_cat.h"

namespace accy::passes {
namespace {

Status OverflowError(std::string_view what, uint64_t a, uint64_t b) {
  return absl::OutOfRangeError(
      StrCat("WorkOverflow: ", what, " of ", a, " and ", b, " does not fit in 64 bits"));
}

// Adds `amount` to `*counter`, naming `what` in the overflow error.
Status Accumulate(uint64_t* counter, uint64_t amount, std::string_view what) {
  if (!CheckedAddU64(*counter, amount, counter)) {
    return absl::OutOfRangeError(StrCat("WorkOverflow: census count of ", what,
                                        " does not fit in 64 bits"));
  }
  return absl::OkStatus();
}

// Atoms and input bytes of one attribute value (see Census).
struct AttributeCost {
  uint64_t atoms = 0;
  uint64_t bytes = 0;
};

AttributeCost CostOf(const AttributeValue& value) {
  AttributeCost cost;
  std::visit(
      [&cost](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          cost.atoms = 1;
          cost.bytes = v.size();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          cost.atoms = v.size();
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          cost.atoms = v.size();
          for (const std::string& entry : v) cost.bytes += entry.size();
        } else if constexpr (std::is_same_v<T, DenseElements>) {
          cost.atoms = 1;
          cost.bytes = v.bytes.size();
        } else {
          cost.atoms = 1;  // int64_t, double, bool
        }
      },
      value);
  return cost;
}

Status AddValue(Census& census, const Value& value) {
  ACCY_RETURN_IF_ERROR(Accumulate(&census.values, 1, "values"));
  return Accumulate(&census.dims, static_cast<uint64_t>(value.type().rank()), "dims");
}

Status InspectRegion(Census& census, const Region& region);

Status InspectBlock(Census& census, const Block& block) {
  ACCY_RETURN_IF_ERROR(Accumulate(&census.blocks, 1, "blocks"));
  for (int64_t i = 0; i < block.num_arguments(); ++i) {
    ACCY_RETURN_IF_ERROR(AddValue(census, *block.argument(i)));
  }
  for (const auto& op : block.operations()) {
    ACCY_RETURN_IF_ERROR(Accumulate(&census.operations, 1, "operations"));
    ACCY_RETURN_IF_ERROR(
        Accumulate(&census.operands, static_cast<uint64_t>(op->num_operands()), "operands"));
    for (int64_t r = 0; r < op->num_results(); ++r) {
      ACCY_RETURN_IF_ERROR(AddValue(census, *op->result(r)));
    }
    for (const NamedAttribute& attribute : op->attributes()) {
      AttributeCost cost = CostOf(attribute.value);
      ACCY_RETURN_IF_ERROR(Accumulate(&census.atoms, cost.atoms, "attribute atoms"));
      ACCY_RETURN_IF_ERROR(Accumulate(&census.input_bytes, cost.bytes, "input bytes"));
    }
    for (int64_t r = 0; r < op->num_regions(); ++r) {
      ACCY_RETURN_IF_ERROR(InspectRegion(census, *op->region(r)));
    }
  }
  return absl::OkStatus();
}

Status InspectRegion(Census& census, const Region& region) {
  ACCY_RETURN_IF_ERROR(Accumulate(&census.regions, 1, "regions"));
  for (const auto& block : region.blocks()) {
    ACCY_RETURN_IF_ERROR(InspectBlock(census, *block));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<Census> Census::Inspect(const Function& function) {
  Census census;
  ACCY_RETURN_IF_ERROR(InspectRegion(census, *function.body()));
  census.value_ids = static_cast<uint64_t>(function.value_id_bound());
  census.op_ids = static_cast<uint64_t>(function.op_id_bound());
  return census;
}

StatusOr<uint64_t> WorkAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  if (!CheckedAddU64(a, b, &sum)) return OverflowError("sum", a, b);
  return sum;
}

StatusOr<uint64_t> WorkMul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (!CheckedMulU64(a, b, &product)) return OverflowError("product", a, b);
  return product;
}

}  // namespace accy::passes
