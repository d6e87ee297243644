// rng_bit_generator work items on Random123 (BindRngBitGenerator, onednn_bindings.h): D. E.
// Shaw Research's header-only counter-based generators (Debian's librandom123-dev, BSD-3-Clause),
// threefry2x32 (20 rounds) and philox4x32 (10 rounds), laid out over the output as XLA:CPU does
// (docs/numerics.md "rng_bit_generator"; the reference evaluator writes the same rules out
// independently, src/reference/rng_bit_generator.cc). No oneDNN primitive: the binding is an
// internal host kernel (BoundPrimitive::host) that LibraryKernel::Run calls like a registered
// one. Every block is a pure function of the key, the counter and the block's index, so blocks
// run in parallel (OpenMP, the team size fixed at binding) when there are enough of them, with
// the same bits for every thread count. The kernel holds no mutable state; Run allocates
// nothing.
#include <Random123/philox.h>
#include <Random123/threefry.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/onednn_bindings.h"
#include "src/util/str_cat.h"

namespace accy::kernels {
namespace {

using u32 = uint32_t;
using u64 = uint64_t;

// Blocks run in parallel from this many (a block is ~80 integer operations, so 2^14 blocks are
// ~0.3 ms of work at one thread): below it a team's start-up would cost more than it saves. Not
// tuned by measurement.
constexpr int64_t kMinParallelBlocks = int64_t{1} << 14;

enum class Algorithm : uint8_t { kThreeFry, kPhilox };

// One rng_bit_generator's shape. THREE_FRY with words of 32 bits or fewer views the output as
// [outer, dim, inner] around its split dim and the blocks as [outer, half, inner]: block
// (o, h, i) fills output elements (o, 2h, i) with its word 0 and (o, 2h + 1, i) with word 1.
struct Geometry {
  Algorithm algorithm = Algorithm::kPhilox;
  int64_t state_words = 2;
  int64_t width = 4;     // output element bytes: 1, 2, 4 or 8
  int64_t elements = 0;  // output elements
  int64_t outer = 1, dim = 1, inner = 1, half = 1;
  int64_t blocks = 0;  // cipher blocks per run, the counter's advance
};

Geometry MakeGeometry(Algorithm algorithm, int64_t state_words, const TensorType& output) {
  Geometry g;
  g.algorithm = algorithm;
  g.state_words = state_words;
  g.width = ElementByteWidth(output.element_type());
  g.elements = output.element_count();
  if (algorithm == Algorithm::kPhilox) {
    const int64_t per_block = g.width == 8 ? 2 : 4;
    g.blocks = (g.elements + per_block - 1) / per_block;
    return g;
  }
  if (g.width == 8) {
    g.blocks = g.elements;
    return g;
  }
  // The split dim: the first even-sized one, else the first of the largest size; a scalar is [1].
  std::vector<int64_t> dims = output.dims();
  if (dims.empty()) dims = {1};
  auto split = std::find_if(dims.begin(), dims.end(), [](int64_t d) { return d % 2 == 0; });
  if (split == dims.end()) split = std::max_element(dims.begin(), dims.end());
  for (auto d = dims.begin(); d != split; ++d) g.outer *= *d;
  for (auto d = split + 1; d != dims.end(); ++d) g.inner *= *d;
  g.dim = *split;
  g.half = (g.dim + 1) / 2;
  g.blocks = g.outer * g.half * g.inner;
  return g;
}

class RngBitGeneratorKernel {
 public:
  static std::shared_ptr<RngBitGeneratorKernel> Create(const Geometry& geometry) {
    auto kernel = std::shared_ptr<RngBitGeneratorKernel>(new RngBitGeneratorKernel());
    kernel->geometry_ = geometry;
    kernel->threads_ = geometry.blocks >= kMinParallelBlocks ? omp_get_max_threads() : 1;
    return kernel;
  }

  // Buffers: initial_state, then output_state and output. The state is read before anything is
  // written, so output_state may share initial_state's buffer.
  Status Run(const HostKernelArgs& args) const {
    const u64* in = static_cast<const u64*>(args.operands[0].data);
    const u64 state[3] = {in[0], in[1], geometry_.state_words == 3 ? in[2] : 0};
    void* output = args.results[1].data;
    switch (geometry_.width) {
      case 1:
        Generate<uint8_t>(state, output);
        break;
      case 2:
        Generate<uint16_t>(state, output);
        break;
      case 4:
        Generate<uint32_t>(state, output);
        break;
      default:
        Generate<uint64_t>(state, output);
        break;
    }
    u64* out_state = static_cast<u64*>(args.results[0].data);
    out_state[0] = state[0];
    const u64 advance = static_cast<u64>(geometry_.blocks);
    if (geometry_.algorithm == Algorithm::kThreeFry) {
      out_state[1] = state[1] + advance;
    } else {
      // The 128-bit counter plus the blocks; a 2-word state keeps the low word only.
      const u64 low = state[1] + advance;
      out_state[1] = low;
      if (geometry_.state_words == 3) out_state[2] = state[2] + (low < state[1] ? 1 : 0);
    }
    return absl::OkStatus();
  }

 private:
  RngBitGeneratorKernel() = default;

  template <typename Word>
  void Generate(const u64 state[3], void* output) const {
    Word* out = static_cast<Word*>(output);
    const Geometry& g = geometry_;
    const u64 key = state[0];
    if (g.algorithm == Algorithm::kThreeFry) {
      const threefry2x32_key_t k = {{static_cast<u32>(key), static_cast<u32>(key >> 32)}};
      const u64 counter = state[1];
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
      for (int64_t b = 0; b < g.blocks; ++b) {
        const u64 c = counter + static_cast<u64>(b);
        const threefry2x32_ctr_t x = {{static_cast<u32>(c), static_cast<u32>(c >> 32)}};
        const threefry2x32_ctr_t y = threefry2x32(x, k);
        if constexpr (sizeof(Word) == 8) {
          out[b] = static_cast<Word>(y.v[0]) | (static_cast<Word>(y.v[1]) << 32);
        } else {
          const int64_t o = b / (g.half * g.inner);
          const int64_t h = (b / g.inner) % g.half;
          const int64_t i = b % g.inner;
          const int64_t first = (o * g.dim + 2 * h) * g.inner + i;
          out[first] = static_cast<Word>(y.v[0]);
          if (2 * h + 1 < g.dim) out[first + g.inner] = static_cast<Word>(y.v[1]);
        }
      }
      return;
    }
    const philox4x32_key_t k = {{static_cast<u32>(key), static_cast<u32>(key >> 32)}};
    const u64 low = state[1];
    const u64 high = g.state_words == 3 ? state[2] : key;
#pragma omp parallel for num_threads(threads_) schedule(static) if (threads_ > 1)
    for (int64_t b = 0; b < g.blocks; ++b) {
      const u64 c_low = low + static_cast<u64>(b);
      const u64 c_high = high + (c_low < low ? 1 : 0);
      const philox4x32_ctr_t x = {{static_cast<u32>(c_low), static_cast<u32>(c_low >> 32),
                                   static_cast<u32>(c_high), static_cast<u32>(c_high >> 32)}};
      const philox4x32_ctr_t y = philox4x32(x, k);
      if constexpr (sizeof(Word) == 8) {
        out[2 * b] = static_cast<Word>(y.v[0]) | (static_cast<Word>(y.v[1]) << 32);
        if (2 * b + 1 < g.elements) {
          out[2 * b + 1] = static_cast<Word>(y.v[2]) | (static_cast<Word>(y.v[3]) << 32);
        }
      } else {
        const int64_t count = std::min<int64_t>(4, g.elements - 4 * b);
        for (int64_t w = 0; w < count; ++w) out[4 * b + w] = static_cast<Word>(y.v[w]);
      }
    }
  }

  Geometry geometry_;
  int threads_ = 1;
};

}  // namespace

StatusOr<BoundPrimitive> BindRngBitGenerator(const Operation& op) {
  if (op.kind() != OpKind::kRngBitGenerator || op.num_operands() != 1 || op.num_results() != 2) {
    return absl::InvalidArgumentError(StrCat("BindRngBitGenerator: ", op.name(),
                                             " is not a verified rng_bit_generator"));
  }
  const std::string name = StrCat("rng_bit_generator %", op.result(0)->id());
  const std::string algorithm = op.GetString("rng_algorithm").value_or("");
  const TensorType& state = op.operand(0)->type();
  const TensorType& output = op.result(1)->type();
  const int64_t words = state.rank() == 1 ? state.dim(0) : 0;
  const bool three_fry = algorithm == "THREE_FRY";
  const bool philox = algorithm == "PHILOX" || algorithm == "DEFAULT";  // DEFAULT is PHILOX
  if (state.element_type() != ElementType::kU64 || !(three_fry || philox) ||
      !(words == 2 || (philox && words == 3))) {
    return absl::InvalidArgumentError(StrCat(
        name, ": rng_algorithm '", algorithm, "' with initial_state ", state.ToString(),
        " is not supported (THREE_FRY: 2 x ui64; PHILOX, DEFAULT: 2 or 3 x ui64)"));
  }
  // Every integer and float type of accy has a width of 1, 2, 4 or 8 bytes; i1 is neither.
  if (!ElementClassContains(ElementClass::kNumeric, output.element_type())) {
    return absl::UnimplementedError(StrCat(name, ": output element type ",
                                           ElementTypeName(output.element_type()),
                                           " is not supported (integer or float types)"));
  }
  const Geometry geometry =
      MakeGeometry(three_fry ? Algorithm::kThreeFry : Algorithm::kPhilox, words, output);
  BoundPrimitive bound;
  bound.name = name;
  bound.inputs = {op.operand(0)};
  bound.outputs = {op.result(0), op.result(1)};
  bound.output_aliases = {-1, -1};
  bound.implementation = three_fry ? "random123:threefry2x32-20" : "random123:philox4x32-10";
  std::shared_ptr<const RngBitGeneratorKernel> kernel = RngBitGeneratorKernel::Create(geometry);
  auto spec = std::make_shared<HostKernelSpec>();
  spec->target = "accy.internal.rng_bit_generator";
  spec->run = [kernel](const HostKernelArgs& args) { return kernel->Run(args); };
  spec->operand_effects = {OperandEffect::kRead};
  bound.host = std::move(spec);
  return bound;
}

}  // namespace accy::kernels
