#include "src/runtime/collective_kernel.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <span>
#include <vector>

#include "accy/builder.h"
#include "src/util/str_cat.h"

namespace accy {
namespace {

// A tensor seen as [outer][mid][inner bytes] around `dim`.
struct Blocks {
  int64_t outer = 1;
  int64_t mid = 1;
  int64_t inner_bytes = 1;
};
Blocks BlocksAround(const TensorType& type, int64_t dim) {
  Blocks b;
  b.inner_bytes = ElementByteWidth(type.element_type());
  for (int64_t d = 0; d < type.rank(); ++d) {
    if (d < dim) b.outer *= type.dim(d);
    if (d == dim) b.mid = type.dim(d);
    if (d > dim) b.inner_bytes *= type.dim(d);
  }
  return b;
}

// The reduction of a computation `return op(arg0, arg1)` (either order), or nullopt.
std::optional<CollectiveReduction> NativeReduction(const Region& region, ElementType type) {
  const Block* block = region.entry_block();
  if (block == nullptr || block->num_arguments() != 2 || block->operations().size() != 2) {
    return std::nullopt;
  }
  const Operation& op = *block->operations()[0];
  const Operation& ret = *block->operations()[1];
  if (ret.kind() != OpKind::kReturn || ret.num_operands() != 1 || ret.operand(0) != op.result(0) ||
      op.num_operands() != 2) {
    return std::nullopt;
  }
  const Value* a = block->argument(0);
  const Value* b = block->argument(1);
  if (!((op.operand(0) == a && op.operand(1) == b) || (op.operand(0) == b && op.operand(1) == a))) {
    return std::nullopt;
  }
  switch (op.kind()) {
    case OpKind::kAdd:
      return CollectiveReduction::kSum;
    case OpKind::kMultiply:
      return CollectiveReduction::kProduct;
    case OpKind::kMaximum:
      return CollectiveReduction::kMax;
    case OpKind::kMinimum:
      return CollectiveReduction::kMin;
    case OpKind::kOr:
      if (IsBool(type)) return CollectiveReduction::kMax;
      return std::nullopt;
    case OpKind::kAnd:
      if (IsBool(type)) return CollectiveReduction::kMin;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The module of `computation` applied elementwise to two 1-D tensors of `count` elements:
// function @combine(acc, x) with the region's elementwise ops on whole tensors and its rank-0
// constants broadcast. kUnimplemented naming an op that is not elementwise.
StatusOr<std::unique_ptr<Module>> CombinerModule(const Region& computation, ElementType type,
                                                 int64_t count) {
  const Block* block = computation.entry_block();
  if (block == nullptr || block->num_arguments() != 2) {
    return absl::InvalidArgumentError("the computation takes two arguments");
  }
  ACCY_ASSIGN_OR_RETURN(TensorType vector, TensorType::Create(type, {count}));
  Builder builder("accy_collective_combiner");
  ACCY_ASSIGN_OR_RETURN(FunctionBuilder f,
                        builder.BeginFunction("combine", {vector, vector}, {vector}));
  std::map<const Value*, Value*> mapped = {{block->argument(0), f.Parameter(0)},
                                           {block->argument(1), f.Parameter(1)}};
  for (const auto& op : block->operations()) {
    std::vector<Value*> operands;
    for (int64_t i = 0; i < op->num_operands(); ++i) operands.push_back(mapped.at(op->operand(i)));
    if (op->kind() == OpKind::kReturn) {
      ACCY_RETURN_IF_ERROR(f.Return(operands));
      break;
    }
    if (op->kind() == OpKind::kConstant) {
      ACCY_ASSIGN_OR_RETURN(Operation * constant,
                            f.CreateOp(OpKind::kConstant, {}, {op->result(0)->type()},
                                       op->attributes()));
      ACCY_ASSIGN_OR_RETURN(TensorType wide, TensorType::Create(
                                                 op->result(0)->type().element_type(), {count}));
      ACCY_ASSIGN_OR_RETURN(mapped[op->result(0)],
                            f.BroadcastInDim(constant->result(0), wide, {}));
      continue;
    }
    if (!IsElementwise(*op)) {
      return absl::UnimplementedError(StrCat("a computation with ", OpName(op->kind()),
                                             " (only elementwise ops and constants fold)"));
    }
    std::vector<TensorType> results;
    for (int64_t r = 0; r < op->num_results(); ++r) {
      ACCY_ASSIGN_OR_RETURN(TensorType wide, TensorType::Create(
                                                 op->result(r)->type().element_type(), {count}));
      results.push_back(wide);
    }
    ACCY_ASSIGN_OR_RETURN(Operation * created,
                          f.CreateOp(op->kind(), operands, results, op->attributes()));
    for (int64_t r = 0; r < op->num_results(); ++r) mapped[op->result(r)] = created->result(r);
  }
  return builder.Finish();
}

Status Prefix(const Status& status, std::string_view name) {
  if (status.ok()) return status;
  return Status(status.code(), StrCat(name, ": ", status.message()));
}

// World of one: every primitive copies locally.
class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::string_view kind() const override { return "single-process"; }
  Status AllReduce(std::span<const int> group, void*, int64_t count, ElementType,
                   CollectiveReduction) override {
    return Check(group, count);
  }
  Status AllGather(std::span<const int> group, const void* send, int64_t bytes,
                   void* recv) override {
    ACCY_RETURN_IF_ERROR(Check(group, bytes));
    if (bytes > 0 && send != recv) std::memmove(recv, send, static_cast<size_t>(bytes));
    return absl::OkStatus();
  }
  Status AllToAll(std::span<const int> group, const void* send, int64_t chunk_bytes,
                  void* recv) override {
    return AllGather(group, send, chunk_bytes, recv);
  }
  Status Broadcast(std::span<const int> group, int root, void*, int64_t bytes) override {
    if (root != 0) return absl::InvalidArgumentError("Broadcast: root outside the group");
    return Check(group, bytes);
  }
  Status Permute(int send_to, const void* send, int recv_from, void* recv,
                 int64_t bytes) override {
    if ((send_to != -1 && send_to != 0) || (recv_from != -1 && recv_from != 0)) {
      return absl::InvalidArgumentError("Permute: peer outside a world of one process");
    }
    if (recv_from == 0 && bytes > 0 && send != recv) {
      std::memmove(recv, send, static_cast<size_t>(bytes));
    }
    return absl::OkStatus();
  }

 private:
  static Status Check(std::span<const int> group, int64_t size) {
    if (group.size() != 1 || group[0] != 0) {
      return absl::InvalidArgumentError("group outside a world of one process");
    }
    if (size < 0) return absl::InvalidArgumentError("negative size");
    return absl::OkStatus();
  }
};

// all_to_all over `group` (spec "all_to_all"): member k's chunk of `in` along split_dimension
// goes to member k; the chunks received, in group order, are concatenated along
// concat_dimension into `out`. The communicator's AllToAll sends group.size() contiguous chunks
// and receives them contiguously in group order, so the operand is packed into a staging
// buffer only when its chunks are not contiguous (a dim of size > 1 before split_dimension),
// and the received chunks are staged and interleaved only when they do not land contiguously
// in the result (a dim of size > 1 before concat_dimension). `in` and `out` do not overlap.
Status AllToAll(std::span<const int> group, const void* in, void* out, const TensorType& in_type,
                int64_t split_dimension, int64_t concat_dimension, Communicator& communicator) {
  const int64_t members = static_cast<int64_t>(group.size());
  const int64_t bytes = static_cast<int64_t>(*in_type.ByteSize());
  const Blocks s = BlocksAround(in_type, split_dimension);
  const int64_t part = (s.mid / members) * s.inner_bytes;  // one outer row's share of a chunk
  const int64_t chunk = s.outer * part;                     // bytes one member sends to one member
  std::vector<int64_t> chunk_dims = in_type.dims();
  chunk_dims[static_cast<size_t>(split_dimension)] /= members;
  ACCY_ASSIGN_OR_RETURN(TensorType chunk_type,
                        TensorType::Create(in_type.element_type(), chunk_dims));
  const Blocks c = BlocksAround(chunk_type, concat_dimension);
  std::vector<uint8_t> send_staging, recv_staging;
  const void* send = in;
  if (s.outer > 1) {
    send_staging.resize(static_cast<size_t>(bytes));
    const auto* src = static_cast<const uint8_t*>(in);
    for (int64_t k = 0; k < members; ++k) {
      for (int64_t o = 0; o < s.outer; ++o) {
        std::memcpy(send_staging.data() + k * chunk + o * part, src + (o * members + k) * part,
                    static_cast<size_t>(part));
      }
    }
    send = send_staging.data();
  }
  void* recv = out;
  if (c.outer > 1) {
    recv_staging.resize(static_cast<size_t>(bytes));
    recv = recv_staging.data();
  }
  ACCY_RETURN_IF_ERROR(communicator.AllToAll(group, send, chunk, recv));
  if (c.outer > 1) {
    // Each received chunk has chunk_type; the result interleaves them along concat_dimension.
    const int64_t block = c.mid * c.inner_bytes;
    auto* dst = static_cast<uint8_t*>(out);
    for (int64_t o = 0; o < c.outer; ++o) {
      for (int64_t k = 0; k < members; ++k) {
        std::memcpy(dst + (o * members + k) * block, recv_staging.data() + k * chunk + o * block,
                    static_cast<size_t>(block));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<int> CollectiveKernel::OutputsInPlaceOn() const {
  std::vector<int> on(outputs_.size(), -1);
  if (kind_ == OpKind::kAllReduce && combiner_ == nullptr && reduction_.has_value()) {
    for (size_t i = 0; i < on.size() && i < inputs_.size(); ++i) on[i] = static_cast<int>(i);
  }
  return on;
}

Communicator& SingleProcessCommunicator() {
  static SelfCommunicator* communicator = new SelfCommunicator();
  return *communicator;
}

StatusOr<std::unique_ptr<CollectiveKernel>> CollectiveKernel::Create(
    const Operation& op, const collectives::Grid& grid, const Engine* engine) {
  std::unique_ptr<CollectiveKernel> kernel(new CollectiveKernel());
  kernel->kind_ = op.kind();
  kernel->name_ = StrCat(OpName(op.kind()), " %", op.num_results() > 0 ? op.result(0)->id() : 0);
  kernel->grid_ = grid;
  for (int64_t i = 0; i < op.num_operands(); ++i) {
    kernel->inputs_.push_back(op.operand(i));
    kernel->operand_types_.push_back(op.operand(i)->type());
  }
  for (int64_t i = 0; i < op.num_results(); ++i) {
    kernel->outputs_.push_back(op.result(i));
    kernel->result_types_.push_back(op.result(i)->type());
  }
  if (op.kind() == OpKind::kReplicaId || op.kind() == OpKind::kPartitionId) return kernel;
  ACCY_ASSIGN_OR_RETURN(kernel->attrs_,
                        ir_internal::ReadCollectiveAttributes(op.kind(), op.attributes()));
  const ir_internal::CollectiveAttributes& attrs = kernel->attrs_;
  if (op.kind() == OpKind::kCollectivePermute) {
    for (int p = 0; p < grid.size(); ++p) {
      ACCY_ASSIGN_OR_RETURN(collectives::PermutePeers peers,
                            collectives::PermutePeersOf(attrs, grid, p));
      kernel->permute_peers_.push_back(peers);
    }
    return kernel;
  }
  if (op.num_regions() > 0) {
    const ElementType type = op.operand(0)->type().element_type();
    kernel->reduction_ = NativeReduction(*op.region(0), type);
    if (!kernel->reduction_.has_value()) {
      if (engine == nullptr) {
        return absl::UnimplementedError(StrCat(
            kernel->name_, ": a computation other than one add, multiply, minimum or maximum of "
                           "its two arguments (or / and on i1) needs an engine to compile it"));
      }
      StatusOr<std::unique_ptr<Module>> module =
          CombinerModule(*op.region(0), type, op.operand(0)->type().element_count());
      if (!module.ok()) return Prefix(module.status(), kernel->name_);
      StatusOr<std::unique_ptr<Executable>> combiner = engine->Compile(**module, "combine");
      if (!combiner.ok()) return Prefix(combiner.status(), kernel->name_);
      kernel->combiner_ = *std::move(combiner);
    }
  }
  int64_t required = -1;
  const TensorType& in = op.operand(0)->type();
  const TensorType& out = op.result(0)->type();
  if (op.kind() == OpKind::kAllToAll) required = attrs.split_count;
  if (op.kind() == OpKind::kAllGather && in.dim(attrs.all_gather_dim) > 0) {
    required = out.dim(attrs.all_gather_dim) / in.dim(attrs.all_gather_dim);
  }
  if (op.kind() == OpKind::kReduceScatter && out.dim(attrs.scatter_dimension) > 0) {
    required = in.dim(attrs.scatter_dimension) / out.dim(attrs.scatter_dimension);
  }
  ACCY_ASSIGN_OR_RETURN(kernel->groups_,
                        collectives::ProcessGroups(op.kind(), attrs, grid, required));
  return kernel;
}

Status CollectiveKernel::Run(void* const* buffers, Communicator& communicator) const {
  if (communicator.world_size() != grid_.size()) {
    return absl::InvalidArgumentError(StrCat(
        name_, ": the communicator's world has ", communicator.world_size(),
        " processes, the program's grid ", grid_.num_replicas, " replicas x ",
        grid_.num_partitions, " partitions"));
  }
  const int rank = communicator.rank();
  const size_t n = inputs_.size();
  const size_t results = outputs_.size();
  if (kind_ == OpKind::kReplicaId || kind_ == OpKind::kPartitionId) {
    const uint32_t id = static_cast<uint32_t>(
        kind_ == OpKind::kReplicaId ? rank / grid_.num_partitions : rank % grid_.num_partitions);
    std::memcpy(buffers[0], &id, sizeof(id));
    return absl::OkStatus();
  }
  const std::vector<int>* group = nullptr;
  int position = 0;
  if (kind_ != OpKind::kCollectivePermute) {
    group = collectives::GroupOf(groups_, rank);
    if (group != nullptr) {
      position = static_cast<int>(std::find(group->begin(), group->end(), rank) - group->begin());
    }
  }
  for (size_t i = 0; i < results; ++i) {
    int root = 0;  // collective_broadcast: the group position the data comes from
    if (attrs_.has_dynamic_root) {
      int32_t value = 0;
      std::memcpy(&value, static_cast<const uint8_t*>(buffers[n - 1]) + 4 * i, sizeof(value));
      const int64_t size = group != nullptr ? static_cast<int64_t>(group->size()) : 0;
      if (group != nullptr && (value < 0 || value >= size)) {
        return absl::InvalidArgumentError(
            StrCat(name_, ": root ", value, " of operand ", i, " is outside the group of ", size,
                   " processes"));
      }
      root = value;
    }
    ACCY_RETURN_IF_ERROR(Prefix(
        RunOperand(i, buffers[i], buffers[n + i], communicator, group, position, root), name_));
  }
  return absl::OkStatus();
}

Status CollectiveKernel::RunOperand(size_t i, const void* in, void* out,
                                    Communicator& communicator, const std::vector<int>* group,
                                    int position, int root) const {
  const TensorType& in_type = operand_types_[i];
  const TensorType& out_type = result_types_[i];
  const int64_t in_bytes = static_cast<int64_t>(*in_type.ByteSize());
  const int64_t out_bytes = static_cast<int64_t>(*out_type.ByteSize());
  auto zero_result = [&] {
    if (out_bytes > 0) std::memset(out, 0, static_cast<size_t>(out_bytes));
    return absl::OkStatus();
  };
  auto copy_in = [&] {
    if (in_bytes > 0 && in != out) std::memcpy(out, in, static_cast<size_t>(in_bytes));
  };
  if (group == nullptr && kind_ != OpKind::kCollectivePermute &&
      kind_ != OpKind::kCollectiveBroadcast) {
    // Create checked that the groups cover the grid.
    return absl::InternalError(StrCat("process ", communicator.rank(), " is in no group"));
  }
  switch (kind_) {
    case OpKind::kCollectivePermute: {
      const collectives::PermutePeers& peers =
          permute_peers_[static_cast<size_t>(communicator.rank())];
      if (peers.recv_from < 0) {
        // Send before zeroing: out may not alias in (separate buffers), so order is free.
        ACCY_RETURN_IF_ERROR(communicator.Permute(peers.send_to, in, -1, nullptr, in_bytes));
        return zero_result();
      }
      return communicator.Permute(peers.send_to, in, peers.recv_from, out, in_bytes);
    }
    case OpKind::kCollectiveBroadcast:
      if (group == nullptr) return zero_result();
      copy_in();
      return communicator.Broadcast(*group, root, out, out_bytes);
    case OpKind::kAllReduce:
    case OpKind::kCollectiveReduce: {
      if (combiner_ != nullptr) {
        ACCY_RETURN_IF_ERROR(GatherAndFold(*group, in, out, in_type, communicator));
      } else {
        ACCY_RETURN_IF_ERROR(communicator.AllReduceTo(*group, in, out, in_type.element_count(),
                                                      in_type.element_type(), *reduction_));
      }
      if (kind_ == OpKind::kCollectiveReduce && position != 0) return zero_result();
      return absl::OkStatus();
    }
    case OpKind::kAllGather: {
      const int64_t members = static_cast<int64_t>(group->size());
      const Blocks b = BlocksAround(in_type, attrs_.all_gather_dim);
      if (b.outer == 1) return communicator.AllGather(*group, in, in_bytes, out);
      std::vector<uint8_t> staging(static_cast<size_t>(out_bytes));
      ACCY_RETURN_IF_ERROR(communicator.AllGather(*group, in, in_bytes, staging.data()));
      const int64_t block = b.mid * b.inner_bytes;  // one operand's row around the dim
      auto* dst = static_cast<uint8_t*>(out);
      for (int64_t o = 0; o < b.outer; ++o) {
        for (int64_t k = 0; k < members; ++k) {
          std::memcpy(dst + (o * members + k) * block, staging.data() + (k * b.outer + o) * block,
                      static_cast<size_t>(block));
        }
      }
      return absl::OkStatus();
    }
    case OpKind::kReduceScatter: {
      const int64_t members = static_cast<int64_t>(group->size());
      std::vector<uint8_t> staging(static_cast<size_t>(in_bytes));
      if (combiner_ != nullptr) {
        ACCY_RETURN_IF_ERROR(GatherAndFold(*group, in, staging.data(), in_type, communicator));
      } else {
        ACCY_RETURN_IF_ERROR(communicator.AllReduceTo(*group, in, staging.data(),
                                                      in_type.element_count(),
                                                      in_type.element_type(), *reduction_));
      }
      const Blocks b = BlocksAround(in_type, attrs_.scatter_dimension);
      const int64_t part = (b.mid / members) * b.inner_bytes;
      auto* dst = static_cast<uint8_t*>(out);
      for (int64_t o = 0; o < b.outer; ++o) {
        std::memcpy(dst + o * part, staging.data() + (o * members + position) * part,
                    static_cast<size_t>(part));
      }
      return absl::OkStatus();
    }
    case OpKind::kAllToAll:
      return AllToAll(*group, in, out, in_type, attrs_.split_dimension, attrs_.concat_dimension,
                      communicator);
    default:
      return absl::InternalError(StrCat(OpName(kind_), " is not a collective"));
  }
}

Status CollectiveKernel::GatherAndFold(const std::vector<int>& group, const void* in, void* out,
                                       const TensorType& type, Communicator& communicator) const {
  const int64_t bytes = static_cast<int64_t>(*type.ByteSize());
  const size_t members = group.size();
  std::vector<uint8_t> gathered(static_cast<size_t>(bytes) * members);
  ACCY_RETURN_IF_ERROR(communicator.AllGather(group, in, bytes, gathered.data()));
  // Fold in group order: acc = m0; acc = combine(acc, m_i), ping-ponging between `out` and a
  // spare buffer (a run's outputs may not overlap its inputs).
  ACCY_ASSIGN_OR_RETURN(TensorType flat,
                        TensorType::Create(type.element_type(), {type.element_count()}));
  std::vector<uint8_t> spare(static_cast<size_t>(bytes));
  void* buffers[2] = {out, spare.data()};
  int current = members % 2 == 1 ? 0 : 1;  // where m0 goes, so the last fold lands in `out`
  if (bytes > 0) std::memcpy(buffers[current], gathered.data(), static_cast<size_t>(bytes));
  for (size_t m = 1; m < members; ++m) {
    ACCY_ASSIGN_OR_RETURN(Tensor acc, Tensor::Borrow(flat, buffers[current]));
    ACCY_ASSIGN_OR_RETURN(Tensor x, Tensor::Borrow(flat, gathered.data() + m * static_cast<size_t>(bytes)));
    ACCY_ASSIGN_OR_RETURN(Tensor next, Tensor::Borrow(flat, buffers[1 - current]));
    const Tensor inputs[] = {acc, x};
    ACCY_RETURN_IF_ERROR(combiner_->Run(inputs, std::span<Tensor>(&next, 1)));
    current = 1 - current;
  }
  return absl::OkStatus();
}

}  // namespace accy
