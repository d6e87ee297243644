// triangular_solve work items on Eigen's triangular solver (BindTriangularSolve,
// onednn_bindings.h). No oneDNN primitive: the binding is an internal host kernel
// (BoundPrimitive::host) that LibraryKernel::Run calls like a registered one. Per batch it maps a
// and the result as row-major matrices (Eigen::Map), copies b into the result and solves in place
// with triangularView<Lower|Upper|UnitLower|UnitUpper>().solveInPlace (Eigen's TriangularView,
// OnTheLeft or OnTheRight; transposed views for TRANSPOSE and ADJOINT, the same for real types).
// f32 and f64 solve in their own type; f16 and bf16 are widened to f32 per batch into a scratch
// slot owned by the kernel, solved, and rounded once (nearest even) into the result
// (docs/numerics.md). Batches run in parallel blocks (OpenMP, the team size fixed at binding)
// when there are several and enough work; every batch is solved by the same code whatever the
// team, so results are the same bits for every thread count. One run at a time per kernel (the
// executor's library mutex): the scratch slots are the kernel's.
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

// Batches solve in parallel only from this many element ops (batch x M x M x N, the planner's
// estimate): below it one thread solves them all, as a team's start-up (a few microseconds)
// would cost more than it saves. The same order of magnitude as kMinLibraryDotElementOps; not
// tuned by measurement.
constexpr uint64_t kMinParallelElementOps = uint64_t{1} << 18;

// One triangular_solve's shape and attributes.
struct Geometry {
  int64_t batches = 0;
  int64_t m = 0;     // a's matrices are m x m
  int64_t rows = 0;  // b's (and the result's) matrices are rows x cols
  int64_t cols = 0;
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  bool transpose = false;  // TRANSPOSE, or ADJOINT (of a real a)
  int64_t a_elements() const { return m * m; }
  int64_t b_elements() const { return rows * cols; }
};

template <typename T, int Mode>
void SolveInPlace(const T* a, T* x, const Geometry& g) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const Matrix> a_matrix(a, g.m, g.m);
  Eigen::Map<Matrix> x_matrix(x, g.rows, g.cols);
  const auto triangle = a_matrix.template triangularView<Mode>();
  if (g.left_side) {
    if (g.transpose) {
      triangle.transpose().solveInPlace(x_matrix);
    } else {
      triangle.solveInPlace(x_matrix);
    }
  } else if (g.transpose) {
    triangle.transpose().template solveInPlace<Eigen::OnTheRight>(x_matrix);
  } else {
    triangle.template solveInPlace<Eigen::OnTheRight>(x_matrix);
  }
}

// Solves one batch: `x` holds b on entry and the solution on return.
template <typename T>
void SolveBatch(const T* a, T* x, const Geometry& g) {
  if (g.lower && g.unit_diagonal) {
    SolveInPlace<T, Eigen::UnitLower>(a, x, g);
  } else if (g.lower) {
    SolveInPlace<T, Eigen::Lower>(a, x, g);
  } else if (g.unit_diagonal) {
    SolveInPlace<T, Eigen::UnitUpper>(a, x, g);
  } else {
    SolveInPlace<T, Eigen::Upper>(a, x, g);
  }
}

// f16 and bf16 through f32: exact widening, one rounding back (Eigen's conversions, as
// src/api/tensor.cc).
template <typename Half>
void Widen(const void* from, float* to, int64_t count) {
  const uint16_t* bits = static_cast<const uint16_t*>(from);
  for (int64_t i = 0; i < count; ++i) {
    to[i] = static_cast<float>(Eigen::numext::bit_cast<Half>(bits[i]));
  }
}
template <typename Half>
void Narrow(const float* from, void* to, int64_t count) {
  uint16_t* bits = static_cast<uint16_t*>(to);
  for (int64_t i = 0; i < count; ++i) bits[i] = Eigen::numext::bit_cast<uint16_t>(Half(from[i]));
}

// The kernel's state: geometry, element type, team size and the f32 scratch of the f16/bf16
// path (one slot of a + b per thread, allocated at binding so a run allocates nothing of ours;
// Eigen itself takes its packing blocks from the stack, or the heap above 128 KiB).
class TriangularSolveKernel {
 public:
  static StatusOr<std::shared_ptr<TriangularSolveKernel>> Create(const Operation& op,
                                                                 std::string_view name) {
    auto kernel = std::shared_ptr<TriangularSolveKernel>(new TriangularSolveKernel());
    const TensorType& a = op.operand(0)->type();
    const TensorType& b = op.operand(1)->type();
    const int64_t rank = b.rank();
    Geometry& g = kernel->geometry_;
    g.left_side = op.GetBool("left_side").value_or(false);
    g.lower = op.GetBool("lower").value_or(false);
    g.unit_diagonal = op.GetBool("unit_diagonal").value_or(false);
    g.transpose = op.GetString("transpose_a").value_or("NO_TRANSPOSE") != "NO_TRANSPOSE";
    g.m = a.dim(rank - 1);
    g.rows = b.dim(rank - 2);
    g.cols = b.dim(rank - 1);
    g.batches = 1;
    for (int64_t d = 0; d + 2 < rank; ++d) g.batches *= b.dim(d);
    kernel->type_ = b.element_type();
    const int64_t rhs = g.left_side ? g.cols : g.rows;
    const uint64_t element_ops = static_cast<uint64_t>(g.batches) * static_cast<uint64_t>(g.m) *
                                 static_cast<uint64_t>(g.m) * static_cast<uint64_t>(rhs);
    kernel->threads_ = g.batches > 1 && element_ops >= kMinParallelElementOps
                           ? static_cast<int>(std::min<int64_t>(omp_get_max_threads(), g.batches))
                           : 1;
    if (kernel->type_ == ElementType::kF16 || kernel->type_ == ElementType::kBF16) {
      const int64_t slot = g.a_elements() + g.b_elements();
      const int64_t total = slot * kernel->threads_;
      const size_t count = static_cast<size_t>(std::max<int64_t>(1, total));
      kernel->scratch_.reset(new (std::nothrow) float[count]);
      if (kernel->scratch_ == nullptr) {
        return absl::ResourceExhaustedError(StrCat(name, ": cannot allocate ", total * 4,
                                                   " bytes of f32 scratch for the f16/bf16 solve"));
      }
    }
    return kernel;
  }

  Status Run(const HostKernelArgs& args) {
    const HostBuffer& a = args.operands[0];
    const HostBuffer& b = args.operands[1];
    const HostBuffer& result = args.results[0];
    if (result.byte_size == 0) return absl::OkStatus();  // an empty batch, M or N
    if (result.data != b.data) std::memcpy(result.data, b.data, static_cast<size_t>(b.byte_size));
    std::atomic<bool> out_of_memory{false};
    const Geometry& g = geometry_;
    const int64_t width = ElementByteWidth(type_);
    char* const x = static_cast<char*>(result.data);
    const char* const a_data = static_cast<const char*>(a.data);
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t batch = 0; batch < g.batches; ++batch) {
      const char* a_batch = a_data + batch * g.a_elements() * width;
      char* x_batch = x + batch * g.b_elements() * width;
      try {
        SolveBatchOf(a_batch, x_batch, omp_get_thread_num());
      } catch (const std::bad_alloc&) {  // Eigen's packing blocks: nothing may escape the kernel
        out_of_memory.store(true, std::memory_order_relaxed);
      }
    }
    if (out_of_memory.load()) {
      return absl::ResourceExhaustedError("Eigen could not allocate its packing blocks");
    }
    return absl::OkStatus();
  }

 private:
  TriangularSolveKernel() = default;

  void SolveBatchOf(const char* a, char* x, int thread) {
    const Geometry& g = geometry_;
    switch (type_) {
      case ElementType::kF32:
        SolveBatch(reinterpret_cast<const float*>(a), reinterpret_cast<float*>(x), g);
        return;
      case ElementType::kF64:
        SolveBatch(reinterpret_cast<const double*>(a), reinterpret_cast<double*>(x), g);
        return;
      case ElementType::kF16:
        SolveStaged<Eigen::half>(a, x, thread);
        return;
      case ElementType::kBF16:
        SolveStaged<Eigen::bfloat16>(a, x, thread);
        return;
      default:
        return;  // Create accepts the float types only (the op table's kFloat)
    }
  }

  template <typename Half>
  void SolveStaged(const char* a, char* x, int thread) {
    const Geometry& g = geometry_;
    float* a32 = scratch_.get() + static_cast<int64_t>(thread) * (g.a_elements() + g.b_elements());
    float* x32 = a32 + g.a_elements();
    Widen<Half>(a, a32, g.a_elements());
    Widen<Half>(x, x32, g.b_elements());
    SolveBatch(a32, x32, g);
    Narrow<Half>(x32, x, g.b_elements());
  }

  Geometry geometry_;
  ElementType type_ = ElementType::kF32;
  int threads_ = 1;
  std::unique_ptr<float[]> scratch_;
};

}  // namespace

StatusOr<BoundPrimitive> BindTriangularSolve(const Operation& op) {
  if (op.kind() != OpKind::kTriangularSolve || op.num_operands() != 2 || op.num_results() != 1) {
    return absl::InvalidArgumentError(StrCat("BindTriangularSolve: ", op.name(),
                                             " is not a verified triangular_solve"));
  }
  const ElementType type = op.operand(1)->type().element_type();
  if (type != ElementType::kF16 && type != ElementType::kBF16 && type != ElementType::kF32 &&
      type != ElementType::kF64) {
    return absl::UnimplementedError(StrCat("triangular_solve %", op.result(0)->id(),
                                           ": element type ", ElementTypeName(type),
                                           " is not supported (f16, bf16, f32, f64)"));
  }
  BoundPrimitive bound;
  bound.name = StrCat("triangular_solve %", op.result(0)->id());
  bound.inputs = {op.operand(0), op.operand(1)};
  bound.outputs = {op.result(0)};
  bound.output_aliases = {-1};
  bound.implementation = "eigen:trsm";
  ACCY_ASSIGN_OR_RETURN(std::shared_ptr<TriangularSolveKernel> kernel,
                        TriangularSolveKernel::Create(op, bound.name));
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.triangular_solve";
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects = {OperandEffect::kRead, OperandEffect::kRead};
  bound.host = std::move(spec);
  return bound;
}

}  // namespace accy::kernels
