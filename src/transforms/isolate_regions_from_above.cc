// IsolateRegionsFromAbovePass (isolate_regions_from_above.h).
#include "src/transforms/isolate_regions_from_above.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/transforms/rewrite_util.h"

namespace accy {
namespace {

bool Rewritable(OpKind kind) {
  return kind == OpKind::kReduce || kind == OpKind::kReduceWindow || kind == OpKind::kSort ||
         kind == OpKind::kScatter;
}

// The values `body` reads from outside it, in first-use order; empty with `ok` false when one of
// them is not rank 0 or an op of the body holds a region (those stay as they are).
std::vector<Value*> Captures(const Block& body, bool* ok) {
  std::vector<Value*> captures;
  *ok = true;
  for (const auto& owned : body.operations()) {
    if (owned->num_regions() != 0) *ok = false;
    for (Value* operand : owned->operands()) {
      const Block* home = operand->is_block_argument() ? operand->owner_block()
                                                       : operand->defining_op()->parent_block();
      if (home == &body) continue;
      if (operand->type().rank() != 0) *ok = false;
      if (std::find(captures.begin(), captures.end(), operand) == captures.end()) {
        captures.push_back(operand);
      }
    }
  }
  if (!*ok) captures.clear();
  return captures;
}

// broadcast_in_dim of rank-0 `value` to `dims`, inserted before `anchor`.
Value* Broadcast(Block& block, const Operation& anchor, Value* value,
                 const std::vector<int64_t>& dims) {
  TensorType type = TensorType::Create(value->type().element_type(), dims).value();
  return block.InsertBefore(&anchor, Operation::Create(OpKind::kBroadcastInDim, {value}, {&type, 1},
                                                       {{"broadcast_dimensions", std::vector<int64_t>{}}}))
      ->result();
}

// Rewrites `op` (of `block`; its body's ops hold no regions) to take `captures` as operands:
// the new op, with a copy of the body, goes in its place and the old one is erased. Returns it.
Operation* Isolate(Block& block, Operation& op, const std::vector<Value*>& captures) {
  const OpKind kind = op.kind();
  const Block& body = *op.region(0)->entry_block();
  const int64_t n = op.num_results();
  const std::vector<int64_t>& result_dims = op.result(0)->type().dims();

  // Operands, and for each body argument of the new block the old argument or capture it is.
  std::vector<Value*> operands;
  std::vector<TensorType> arg_types;
  std::vector<const Value*> arg_source;  // old argument, or the capture (null: the returned copy)
  std::vector<int64_t> returned_copy;    // new argument index each capture's channel returns
  auto old_args = [&](int64_t from, int64_t count) {
    for (int64_t i = from; i < from + count; ++i) {
      arg_types.push_back(body.argument(i)->type());
      arg_source.push_back(body.argument(i));
    }
  };
  auto capture_args = [&](bool read) {
    for (Value* capture : captures) {
      if (!read) returned_copy.push_back(static_cast<int64_t>(arg_types.size()));
      arg_types.push_back(capture->type());
      arg_source.push_back(read ? capture : nullptr);
    }
  };
  if (kind == OpKind::kSort) {
    for (int64_t i = 0; i < n; ++i) operands.push_back(op.operand(i));
    for (Value* c : captures) operands.push_back(Broadcast(block, op, c, op.operand(0)->type().dims()));
    old_args(0, 2 * n);
    for (Value* capture : captures) {  // (lhs, rhs) per operand
      arg_types.push_back(capture->type());
      arg_source.push_back(capture);
      arg_types.push_back(capture->type());
      arg_source.push_back(nullptr);
    }
  } else if (kind == OpKind::kScatter) {
    for (int64_t i = 0; i < n; ++i) operands.push_back(op.operand(i));
    for (Value* c : captures) operands.push_back(Broadcast(block, op, c, op.operand(0)->type().dims()));
    operands.push_back(op.operand(n));  // scatter_indices
    for (int64_t i = 0; i < n; ++i) operands.push_back(op.operand(n + 1 + i));
    for (Value* c : captures) {
      operands.push_back(Broadcast(block, op, c, op.operand(n + 1)->type().dims()));
    }
    old_args(0, n);
    capture_args(/*read=*/true);
    old_args(n, n);
    capture_args(/*read=*/false);
  } else {  // reduce, reduce_window: inputs, then inits
    for (int64_t i = 0; i < n; ++i) operands.push_back(op.operand(i));
    for (Value* c : captures) operands.push_back(Broadcast(block, op, c, op.operand(0)->type().dims()));
    for (int64_t i = 0; i < n; ++i) operands.push_back(op.operand(n + i));
    for (Value* c : captures) operands.push_back(c);
    old_args(0, n);
    capture_args(/*read=*/true);
    old_args(n, n);
    capture_args(/*read=*/false);
  }

  std::vector<TensorType> result_types;
  for (int64_t r = 0; r < n; ++r) result_types.push_back(op.result(r)->type());
  for (Value* c : captures) {
    result_types.push_back(TensorType::Create(c->type().element_type(), result_dims).value());
  }
  Operation* rewritten =
      block.InsertBefore(&op, Operation::Create(kind, std::move(operands), result_types, op.attributes()));
  Block* new_body = rewritten->AddRegion()->AddBlock(arg_types);
  std::unordered_map<const Value*, Value*> map;
  for (size_t a = 0; a < arg_source.size(); ++a) {
    if (arg_source[a] != nullptr) map.emplace(arg_source[a], new_body->argument(static_cast<int64_t>(a)));
  }
  for (const auto& owned : body.operations()) {
    std::vector<Value*> mapped;
    for (Value* operand : owned->operands()) mapped.push_back(map.at(operand));
    if (owned->kind() == OpKind::kReturn && kind != OpKind::kSort) {
      for (int64_t a : returned_copy) mapped.push_back(new_body->argument(a));
    }
    std::vector<TensorType> types;
    for (int64_t r = 0; r < owned->num_results(); ++r) types.push_back(owned->result(r)->type());
    Operation* copy = new_body->Append(
        Operation::Create(owned->kind(), std::move(mapped), types, owned->attributes()));
    for (int64_t r = 0; r < owned->num_results(); ++r) map.emplace(owned->result(r), copy->result(r));
  }
  for (int64_t r = 0; r < n; ++r) op.result(r)->ReplaceAllUsesWith(rewritten->result(r));
  block.Erase(&op);
  return rewritten;
}

int64_t RewriteBlock(Block& block) {
  int64_t rewritten = 0;
  for (size_t i = 0; i < block.operations().size(); ++i) {
    Operation* op = block.operations()[i].get();
    rewritten += SumOverNestedBlocks(*op, [&](Block& nested) { return RewriteBlock(nested); });
    if (!Rewritable(op->kind()) || op->num_regions() != 1 ||
        op->region(0)->entry_block() == nullptr) {
      continue;
    }
    bool ok = false;
    const std::vector<Value*> captures = Captures(*op->region(0)->entry_block(), &ok);
    if (!ok || captures.empty()) continue;
    Operation* replacement = Isolate(block, *op, captures);
    ++rewritten;
    // Broadcasts went in before the op, which was replaced in place: continue after it.
    i = static_cast<size_t>(block.IndexOf(replacement));
  }
  return rewritten;
}

}  // namespace

int64_t IsolateRegionsFromAbove(Function& function) { return RewriteBlock(*function.entry_block()); }

const passes::WorkContract& IsolateRegionsFromAbovePass::contract() const {
  static const passes::WorkContract kContract{{kName, 1}, &EstimateOneVisitPerNode};
  return kContract;
}

Status IsolateRegionsFromAbovePass::Run(passes::PassContext& context) {
  return FinishRewrite(context, IsolateRegionsFromAbove(context.function()));
}

}  // namespace accy
