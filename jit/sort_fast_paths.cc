// The vqsort paths of the sort kernels (sort_emitter.cc's file comment; sort_emitter_internal.h):
// a single plain key sorted as integer keys (MatchFastSort), and a key function of one operand
// sorted as (key, position) pairs with every operand gathered after (MatchKeyedSort).
#include <algorithm>
#include <bit>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "jit/region_lowering.h"
#include "jit/shape_kernel_builder.h"
#include "jit/sort_emitter_internal.h"
#include "src/util/str_cat.h"

namespace accy::jit::sort_internal {
namespace {

// The fast path: one operand of a 16-64-bit type (not i1) whose comparator is a single compare
// of its two arguments -- LT ascending or GT descending (either argument order flips it),
// TOTALORDER for floats and the type's own order for integers. That comparator is a strict
// total order on the bits: equal keys are equal bits, so stability cannot show, and the row can
// go to vqsort (sort_runtime.h) as integer keys.
struct FastSort {
  bool descending = false;
  std::string function;  // accy_sort_keys_<i|u><bits>
};

std::optional<FastSort> MatchFastSort(const Operation& op) {
  if (op.num_operands() != 1 || op.num_regions() != 1) return std::nullopt;
  const ElementType type = op.operand(0)->type().element_type();
  const int64_t width = ElementByteWidth(type);
  if (IsBool(type) || width < 2) return std::nullopt;
  const Block* block = op.region(0)->entry_block();
  if (block == nullptr || block->num_arguments() != 2 || block->operations().size() != 2) {
    return std::nullopt;
  }
  const Operation& compare = *block->operations()[0];
  const Operation& ret = *block->operations()[1];
  if (compare.kind() != OpKind::kCompare || ret.kind() != OpKind::kReturn ||
      ret.num_operands() != 1 || ret.operand(0) != compare.result(0)) {
    return std::nullopt;
  }
  const std::optional<std::string> order = compare.GetString("compare_type");
  if (IsFloat(type) ? order != "TOTALORDER"
                    : order.has_value() && *order != (IsSigned(type) ? "SIGNED" : "UNSIGNED")) {
    return std::nullopt;
  }
  bool swapped;
  if (compare.operand(0) == block->argument(0) && compare.operand(1) == block->argument(1)) {
    swapped = false;
  } else if (compare.operand(0) == block->argument(1) && compare.operand(1) == block->argument(0)) {
    swapped = true;
  } else {
    return std::nullopt;
  }
  const std::optional<std::string> direction = compare.GetString("comparison_direction");
  if (direction != "LT" && direction != "GT") return std::nullopt;
  FastSort fast;
  fast.descending = (*direction == "GT") != swapped;
  fast.function = StrCat("accy_sort_keys_", IsUnsigned(type) ? "u" : "i", width * 8);
  return fast;
}

StatusOr<KernelSignature> EmitFastSortKernel(const Operation& op, const FastSort& fast,
                                             const RowGeometry& g, llvm::Module& module,
                                             std::string_view symbol) {
  const ElementType type = op.operand(0)->type().element_type();
  const int64_t width = ElementByteWidth(type);
  KernelSignature signature;
  const size_t input = AddInput(signature, op.operand(0));
  signature.outputs = {op.result(0)};
  const size_t output = signature.inputs.size();
  const size_t scratch = output + 1;
  const int64_t slot_bytes = (g.size * width + 7) / 8 * 8;
  SetSortBlocks(g, slot_bytes, signature);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(),
                       signature.outputs.size() + (signature.scratch_bytes > 0 ? 1 : 0));
  if (signature.block_count == 0) {
    k.Finish();
    return signature;
  }
  llvm::IRBuilder<>& b = k.ir();
  const unsigned bits = static_cast<unsigned>(width * 8);
  // TOTALORDER as signed integers: negative floats flip their magnitude bits (an involution, so
  // the same map turns keys back into floats).
  auto key = [&](llvm::Value* raw) -> llvm::Value* {
    if (!IsFloat(type)) return raw;
    return b.CreateSelect(b.CreateICmpSLT(raw, b.getIntN(bits, 0)),
                          b.CreateXor(raw, b.getInt(llvm::APInt::getSignedMaxValue(bits))), raw);
  };
  llvm::FunctionCallee sort_keys = module.getOrInsertFunction(
      fast.function, b.getVoidTy(), b.getPtrTy(), b.getInt64Ty(), b.getInt32Ty());
  llvm::Value* stride = k.Int(g.stride);
  llvm::Value* size = k.Int(g.size);
  Status status = k.Loop(k.block_begin(), k.block_end(), [&](llvm::Value* block) -> Status {
    llvm::Value* slot = b.CreateMul(block, k.Int(slot_bytes / width));
    llvm::Value* row_begin = b.CreateMul(block, k.Int(signature.block_size));
    llvm::Value* row_end = Min(b, b.CreateAdd(row_begin, k.Int(signature.block_size)),
                               k.Int(g.rows));
    return k.Loop(row_begin, row_end, [&](llvm::Value* row) -> Status {
      llvm::Value* base = b.CreateAdd(
          b.CreateMul(b.CreateUDiv(row, stride), k.Int(g.size * g.stride)),
          b.CreateURem(row, stride));
      ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* raw = k.LoadBits(input, type, b.CreateAdd(base, b.CreateMul(p, stride)));
        k.StoreBits(scratch, type, b.CreateAdd(slot, p), key(raw));
        return absl::OkStatus();
      }));
      b.CreateCall(sort_keys, {k.ElementPointer(scratch, type, slot), size,
                               b.getInt32(fast.descending ? 1 : 0)});
      return k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* sorted = k.LoadBits(scratch, type, b.CreateAdd(slot, p));
        k.StoreBits(output, type, b.CreateAdd(base, b.CreateMul(p, stride)), key(sorted));
        return absl::OkStatus();
      });
    });
  });
  ACCY_RETURN_IF_ERROR(status);
  k.Finish();
  return signature;
}

// The keyed path: a comparator `compare(f(lhs_i), f(rhs_i))`, LT or GT (either argument
// order), TOTALORDER for float keys and the type's order for integer ones, where f is the same
// elementwise function (any ops LowerRegionValue lowers) of the two arguments of one operand i
// and the key f(x) is at most 32 bits -- JAX's float sorts, which map -0 to +0 and every NaN to
// one NaN before a TOTALORDER LT, and its argsorts, which carry an iota along. Such a
// comparator orders the elements by f(x)'s TOTALORDER key, ties equal, so the stable sort is
// the order of (key, position): each element becomes a u64 (ordered key << 32 | position),
// vqsort sorts the row's u64s ascending (descending flips the key's bits, not the positions),
// and every operand is gathered by the sorted positions. The result is the stable sort's, bit
// for bit.
struct KeyedSort {
  int64_t operand = 0;                 // the operand f reads
  const Value* lhs_argument = nullptr;  // the block argument f reads in the compare's lhs
  const Value* key = nullptr;          // f(lhs_argument) in the block
  ElementType key_type = ElementType::kF32;
  bool descending = false;
};

bool SameAttribute(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  if (std::holds_alternative<double>(a)) {  // by bits: -0.0 and 0.0 differ
    return std::bit_cast<uint64_t>(std::get<double>(a)) == std::bit_cast<uint64_t>(std::get<double>(b));
  }
  return a == b;
}

// Whether `v` is computed in `block` from block argument `argument` and constants only.
bool ReadsOnly(const Value* v, const Value* argument, const Block& block) {
  if (v == argument) return true;
  const Operation* def = v->defining_op();
  if (def == nullptr || def->num_regions() != 0 ||
      std::none_of(block.operations().begin(), block.operations().end(),
                   [&](const auto& owned) { return owned.get() == def; })) {
    return false;  // another block argument, or a value from outside the comparator
  }
  for (const Value* operand : def->operands()) {
    if (!ReadsOnly(operand, argument, block)) return false;
  }
  return true;
}

// Whether `x` (over argument `ax`) and `y` (over `ay`) are the same function of their argument.
bool SameFunction(const Value* x, const Value* y, const Value* ax, const Value* ay) {
  if (x == ax || y == ay) return x == ax && y == ay;
  if (x == y) return true;  // a shared constant subexpression
  const Operation* a = x->defining_op();
  const Operation* b = y->defining_op();
  if (a == nullptr || b == nullptr || a->kind() != b->kind() ||
      a->num_operands() != b->num_operands() || a->num_results() != 1 || b->num_results() != 1 ||
      !(x->type() == y->type()) || a->attributes().size() != b->attributes().size()) {
    return false;
  }
  for (const NamedAttribute& attribute : a->attributes()) {
    const AttributeValue* other = b->attribute(attribute.name);
    if (other == nullptr || !SameAttribute(attribute.value, *other)) return false;
  }
  for (int64_t i = 0; i < a->num_operands(); ++i) {
    if (!SameFunction(a->operand(i), b->operand(i), ax, ay)) return false;
  }
  return true;
}

std::optional<KeyedSort> MatchKeyedSort(const Operation& op, const RowGeometry& g) {
  if (op.num_regions() != 1 || g.size > (int64_t{1} << 32)) return std::nullopt;
  const Block* block = op.region(0)->entry_block();
  if (block == nullptr || block->num_arguments() != 2 * op.num_operands() ||
      block->operations().empty()) {
    return std::nullopt;
  }
  const Operation& ret = *block->operations().back();
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1) return std::nullopt;
  const Operation* compare = ret.operand(0)->defining_op();
  if (compare == nullptr || compare->kind() != OpKind::kCompare) return std::nullopt;
  const std::optional<std::string> direction = compare->GetString("comparison_direction");
  if (direction != "LT" && direction != "GT") return std::nullopt;
  const ElementType type = compare->operand(0)->type().element_type();
  const std::optional<std::string> order = compare->GetString("compare_type");
  if (IsFloat(type) ? order != "TOTALORDER"
                    : order.has_value() && *order != (IsSigned(type) ? "SIGNED" : "UNSIGNED")) {
    return std::nullopt;
  }
  if (ElementByteWidth(type) > 4) return std::nullopt;
  for (int64_t i = 0; i < op.num_operands(); ++i) {
    for (bool swapped : {false, true}) {
      const Value* lhs = block->argument(2 * i + (swapped ? 1 : 0));
      const Value* rhs = block->argument(2 * i + (swapped ? 0 : 1));
      if (ReadsOnly(compare->operand(0), lhs, *block) && ReadsOnly(compare->operand(1), rhs, *block) &&
          SameFunction(compare->operand(0), compare->operand(1), lhs, rhs)) {
        KeyedSort keyed;
        keyed.operand = i;
        keyed.lhs_argument = lhs;
        keyed.key = compare->operand(0);
        keyed.key_type = type;
        keyed.descending = (*direction == "GT") != swapped;
        return keyed;
      }
    }
  }
  return std::nullopt;
}

StatusOr<KernelSignature> EmitKeyedSortKernel(const Operation& op, const KeyedSort& keyed,
                                              const RowGeometry& g, llvm::Module& module,
                                              std::string_view symbol) {
  const size_t n = static_cast<size_t>(op.num_operands());
  KernelSignature signature;
  const SortBuffers buffers = AddSortBuffers(op, signature);
  const std::vector<size_t>& inputs = buffers.inputs;
  const std::vector<ElementType>& types = buffers.types;
  const size_t first_output = buffers.first_output;
  const size_t scratch = buffers.scratch;
  const int64_t slot_bytes = g.size * 8;
  SetSortBlocks(g, slot_bytes, signature);
  ShapeKernelBuilder k(module, symbol, signature.inputs.size(),
                       signature.outputs.size() + (signature.scratch_bytes > 0 ? 1 : 0));
  if (signature.block_count == 0) {
    k.Finish();
    return signature;
  }
  llvm::IRBuilder<>& b = k.ir();
  const unsigned bits = static_cast<unsigned>(ElementByteWidth(keyed.key_type) * 8);
  llvm::FunctionCallee sort_keys = module.getOrInsertFunction(
      "accy_sort_keys_u64", b.getVoidTy(), b.getPtrTy(), b.getInt64Ty(), b.getInt32Ty());
  // The key's bits as an unsigned integer in the comparator's order: TOTALORDER floats flip
  // their magnitude bits when negative (signed order), then signed order becomes unsigned by
  // flipping the sign bit; descending flips every bit.
  auto ordered = [&](llvm::Value* key) -> llvm::Value* {
    llvm::Value* raw = b.CreateBitCast(k.lowering().ToMemory(key, keyed.key_type), b.getIntNTy(bits));
    if (IsFloat(keyed.key_type)) {
      raw = b.CreateSelect(b.CreateICmpSLT(raw, b.getIntN(bits, 0)),
                           b.CreateXor(raw, b.getInt(llvm::APInt::getSignedMaxValue(bits))), raw);
    }
    if (IsFloat(keyed.key_type) || IsSigned(keyed.key_type)) {
      raw = b.CreateXor(raw, b.getInt(llvm::APInt::getSignMask(bits)));
    }
    if (keyed.descending) raw = b.CreateNot(raw);
    return b.CreateZExt(raw, b.getInt64Ty());
  };
  llvm::Value* stride = k.Int(g.stride);
  llvm::Value* size = k.Int(g.size);
  const size_t key_input = inputs[static_cast<size_t>(keyed.operand)];
  const ElementType operand_type = types[static_cast<size_t>(keyed.operand)];
  Status status = k.Loop(k.block_begin(), k.block_end(), [&](llvm::Value* block) -> Status {
    llvm::Value* slot = b.CreateMul(block, k.Int(g.size));
    llvm::Value* row_begin = b.CreateMul(block, k.Int(signature.block_size));
    llvm::Value* row_end = Min(b, b.CreateAdd(row_begin, k.Int(signature.block_size)), k.Int(g.rows));
    return k.Loop(row_begin, row_end, [&](llvm::Value* row) -> Status {
      llvm::Value* base = b.CreateAdd(b.CreateMul(b.CreateUDiv(row, stride), k.Int(g.size * g.stride)),
                                      b.CreateURem(row, stride));
      ACCY_RETURN_IF_ERROR(k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* x = k.LoadElement(key_input, operand_type, b.CreateAdd(base, b.CreateMul(p, stride)));
        ACCY_ASSIGN_OR_RETURN(llvm::Value * key,
                              LowerRegionValue(k.lowering(), *op.region(0), {{keyed.lhs_argument, x}},
                                               keyed.key, "shape emitter: sort comparator key"));
        k.StoreBits(scratch, ElementType::kU64, b.CreateAdd(slot, p),
                    b.CreateOr(b.CreateShl(ordered(key), 32), p));
        return absl::OkStatus();
      }));
      b.CreateCall(sort_keys, {k.ElementPointer(scratch, ElementType::kU64, slot), size, b.getInt32(0)});
      return k.Loop(k.Int(0), size, [&](llvm::Value* p) -> Status {
        llvm::Value* packed = k.LoadBits(scratch, ElementType::kU64, b.CreateAdd(slot, p));
        llvm::Value* from = b.CreateAdd(base, b.CreateMul(b.CreateAnd(packed, k.Int(0xFFFFFFFF)), stride));
        llvm::Value* to = b.CreateAdd(base, b.CreateMul(p, stride));
        for (size_t i = 0; i < n; ++i) {
          k.StoreBits(first_output + i, types[i], to, k.LoadBits(inputs[i], types[i], from));
        }
        return absl::OkStatus();
      });
    });
  });
  ACCY_RETURN_IF_ERROR(status);
  k.Finish();
  return signature;
}

}  // namespace

std::optional<StatusOr<KernelSignature>> EmitSortFastPath(const Operation& op, const RowGeometry& g,
                                                          llvm::Module& module,
                                                          std::string_view symbol) {
  if (std::optional<FastSort> fast = MatchFastSort(op)) {
    return EmitFastSortKernel(op, *fast, g, module, symbol);
  }
  if (std::optional<KeyedSort> keyed = MatchKeyedSort(op, g)) {
    return EmitKeyedSortKernel(op, *keyed, g, module, symbol);
  }
  return std::nullopt;
}

}  // namespace accy::jit::sort_internal
