// libFuzzer target: Engine::Compile and Executable::Run of parsed StableHLO programs
// (include/accy/engine.h). Any bytes are parsed as one module (ParseStableHlo); programs over
// small limits (kLimits below: op count, elements per value and in all, constant bytes) are
// skipped before compiling so that each input runs in milliseconds, not the limits of a service.
// The entry is `main` when present, else the first public function; its inputs are filled from a
// hash of the input bytes with ordinary and edge values (0, -0, +-inf, NaN, the integer extremes).
// An even hash compiles with the default pipeline, an odd one with fusion off and every graph
// pass skipped. Properties beyond "no sanitizer report": Compile and Run fail only with a
// documented input error (the codes of engine.h and planner.h, with a message); a successful Run
// returns one output per result, of the declared types; a second Run into caller-provided outputs
// succeeds with the same bytes.
//
// One engine per pipeline serves every input (its in-memory kernel object cache is what a service
// has); both are made again every kEngineReuse compiles so that the caches cannot grow through a
// long run.
// One thread (ACCY_FUZZ_THREADS=N overrides; the second-run comparison then assumes results do
// not depend on the team) and LLVM -O1 (ACCY_FUZZ_OPT_LEVEL=0..3 overrides) keep the executions
// per second up; max_while_iterations and the work allowance bound every loop and
// every planning stage.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accy/engine.h"
#include "accy/ir.h"
#include "accy/stablehlo.h"
#include "accy/tensor.h"
#include "fuzz/fuzz_check.h"

namespace {

using accy::fuzz::FuzzCheck;

struct Limits {
  int64_t ops = 64;                    // operations, nested regions included
  int64_t elements_per_value = 4096;   // of any parameter, result or block argument
  int64_t total_elements = 1 << 16;    // over every value of the module
  int64_t constant_bytes = 1 << 16;    // constant payloads, in all
};
constexpr Limits kLimits;
constexpr int kEngineReuse = 2000;

// Sums what the limits count; false as soon as one is exceeded.
class ProgramSize {
 public:
  bool Add(const accy::TensorType& type) {
    const int64_t elements = type.element_count();
    if (elements > kLimits.elements_per_value) return false;
    total_elements_ += elements;
    return total_elements_ <= kLimits.total_elements;
  }
  bool AddBlock(const accy::Block& block) {
    for (int64_t i = 0; i < block.num_arguments(); ++i) {
      if (!Add(block.argument(i)->type())) return false;
    }
    for (const auto& op : block.operations()) {
      if (++ops_ > kLimits.ops) return false;
      for (int64_t r = 0; r < op->num_results(); ++r) {
        if (!Add(op->result(r)->type())) return false;
      }
      for (const accy::NamedAttribute& attribute : op->attributes()) {
        if (const auto* dense = std::get_if<accy::DenseElements>(&attribute.value)) {
          constant_bytes_ += static_cast<int64_t>(dense->bytes.size());
          if (constant_bytes_ > kLimits.constant_bytes) return false;
        }
      }
      for (int64_t r = 0; r < op->num_regions(); ++r) {
        for (const auto& nested : op->region(r)->blocks()) {
          if (!AddBlock(*nested)) return false;
        }
      }
    }
    return true;
  }

 private:
  int64_t ops_ = 0;
  int64_t total_elements_ = 0;
  int64_t constant_bytes_ = 0;
};

bool WithinLimits(const accy::Module& module) {
  ProgramSize size;
  for (const auto& function : module.functions()) {
    for (const accy::TensorType& type : function->result_types()) {
      if (!size.Add(type)) return false;
    }
    if (!size.AddBlock(*function->entry_block())) return false;
  }
  return true;
}

// splitmix64: a deterministic stream per input.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

template <typename T>
T IntegerValue(uint64_t random) {
  switch (random % 8) {
    case 0: return std::numeric_limits<T>::min();
    case 1: return std::numeric_limits<T>::max();
    case 2: return static_cast<T>(0);
    case 3: return static_cast<T>(-1);  // the max of an unsigned type
    default: return static_cast<T>(static_cast<int64_t>((random >> 8) % 9) - 4);
  }
}

double FloatValue(uint64_t random) {
  switch (random % 16) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return std::numeric_limits<double>::infinity();
    case 3: return -std::numeric_limits<double>::infinity();
    case 4: return std::numeric_limits<double>::quiet_NaN();
    case 5: return 65504.0;  // the largest f16
    default: return (static_cast<double>((random >> 8) % 2001) - 1000.0) / 128.0;
  }
}

template <typename T>
void Store(uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

// The f16 bit pattern of one of FloatValue's values (exact: multiples of 1/128 below 8 in
// magnitude, the specials and 65504); the f32 mantissa is cut to 10 bits.
uint16_t HalfBits(double value) {
  if (value != value) return 0x7E00;
  if (value == std::numeric_limits<double>::infinity()) return 0x7C00;
  if (value == -std::numeric_limits<double>::infinity()) return 0xFC00;
  if (value == 65504.0) return 0x7BFF;
  if (value == 0.0) return std::signbit(value) ? 0x8000 : 0x0000;
  // Small multiples of 1/128 are exact in f16 for |value| < 8: sign, exponent, mantissa.
  const float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  if (exponent <= 0) return static_cast<uint16_t>(sign);
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) |
                               ((bits >> 13) & 0x3FF));
}

accy::StatusOr<accy::Tensor> MakeInput(const accy::TensorType& type, uint64_t& state) {
  ACCY_ASSIGN_OR_RETURN(accy::Tensor tensor, accy::Tensor::Allocate(type));
  uint8_t* out = tensor.bytes().data();
  const int64_t width = accy::ElementByteWidth(type.element_type());
  for (int64_t i = 0; i < type.element_count(); ++i) {
    const uint64_t random = NextRandom(state);
    uint8_t* at = out + i * width;
    switch (type.element_type()) {
      case accy::ElementType::kF16: Store(at, HalfBits(FloatValue(random))); break;
      case accy::ElementType::kBF16: {
        const float f = static_cast<float>(FloatValue(random));
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        Store(at, static_cast<uint16_t>(bits >> 16));
        break;
      }
      case accy::ElementType::kF32: Store(at, static_cast<float>(FloatValue(random))); break;
      case accy::ElementType::kF64: Store(at, FloatValue(random)); break;
      case accy::ElementType::kI1: Store(at, static_cast<uint8_t>(random & 1)); break;
      case accy::ElementType::kI8: Store(at, IntegerValue<int8_t>(random)); break;
      case accy::ElementType::kI16: Store(at, IntegerValue<int16_t>(random)); break;
      case accy::ElementType::kI32: Store(at, IntegerValue<int32_t>(random)); break;
      case accy::ElementType::kI64: Store(at, IntegerValue<int64_t>(random)); break;
      case accy::ElementType::kU8: Store(at, IntegerValue<uint8_t>(random)); break;
      case accy::ElementType::kU16: Store(at, IntegerValue<uint16_t>(random)); break;
      case accy::ElementType::kU32: Store(at, IntegerValue<uint32_t>(random)); break;
      case accy::ElementType::kU64: Store(at, IntegerValue<uint64_t>(random)); break;
    }
  }
  return tensor;
}

// `fused`: the default pipeline; otherwise fusion off and every graph pass skipped, so that the
// same program also reaches the unfused work items and the passes' absence (engine.h says the
// results are the same either way).
accy::Engine& SharedEngine(bool fused) {
  static std::unique_ptr<accy::Engine> engines[2];
  static int compiles = 0;
  std::unique_ptr<accy::Engine>& engine = engines[fused ? 1 : 0];
  if (++compiles % kEngineReuse == 0) {
    engines[0].reset();
    engines[1].reset();
  }
  if (engine == nullptr) {
    accy::EngineOptions options;
    if (!fused) {
      options.enable_fusion = false;
      options.disabled_passes = {"simplify-layout-chains", "fold-transpose-into-dot-general",
                                 "eliminate-common-subexpressions", "eliminate-dead-code"};
    }
    options.num_threads = 1;
    options.optimization_level = 1;
    options.verify_each_pass = true;  // a pass that leaves an invalid module is named
    if (const char* level = std::getenv("ACCY_FUZZ_OPT_LEVEL")) {
      options.optimization_level = std::atoi(level);
    }
    if (const char* threads = std::getenv("ACCY_FUZZ_THREADS")) {
      options.num_threads = std::atoi(threads);
    }
    options.max_while_iterations = 64;
    options.work_allowance.allocation_capacity = uint64_t{1} << 28;
    options.work_allowance.workspace_bytes = uint64_t{1} << 26;
    options.work_allowance.retained_storage_bytes = uint64_t{1} << 26;
    accy::StatusOr<std::unique_ptr<accy::Engine>> created = accy::Engine::Create(options);
    FuzzCheck(created.ok(), "Engine::Create fails",
              created.ok() ? "" : created.status().ToString());
    engine = std::move(*created);
  }
  return *engine;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  accy::StatusOr<std::unique_ptr<accy::Module>> module = accy::ParseStableHlo(text);
  if (!module.ok() || (*module)->functions().empty() || !WithinLimits(**module)) return 0;
  const accy::Function* entry = (*module)->FindFunction("main");
  if (entry == nullptr) {
    for (const auto& function : (*module)->functions()) {
      if (function->is_public()) {
        entry = function.get();
        break;
      }
    }
  }
  if (entry == nullptr) return 0;

  uint64_t state = size;
  for (size_t i = 0; i < size; ++i) state = state * 131 + data[i];
  const bool fused = (state & 1) == 0;
  accy::StatusOr<std::unique_ptr<accy::Executable>> executable =
      SharedEngine(fused).Compile(**module, entry->name());
  if (!executable.ok()) {
    FuzzCheck(accy::fuzz::IsDocumentedInputError(executable.status()),
              "Compile fails with an undocumented code or no message",
              executable.status().ToString() + "\n" + std::string(text));
    return 0;
  }
  std::vector<accy::Tensor> inputs;
  for (const accy::TensorType& type : (*executable)->parameter_types()) {
    accy::StatusOr<accy::Tensor> input = MakeInput(type, state);
    FuzzCheck(input.ok(), "an input of a parameter type cannot be allocated", type.ToString());
    inputs.push_back(std::move(*input));
  }
  accy::StatusOr<std::vector<accy::Tensor>> outputs = (*executable)->Run(inputs);
  if (!outputs.ok()) {
    FuzzCheck(accy::fuzz::IsDocumentedInputError(outputs.status()),
              "Run fails with an undocumented code or no message",
              outputs.status().ToString() + "\n" + std::string(text));
    return 0;
  }
  const std::vector<accy::TensorType>& result_types = (*executable)->result_types();
  FuzzCheck(outputs->size() == result_types.size(), "Run returns the wrong number of outputs");
  for (size_t i = 0; i < outputs->size(); ++i) {
    FuzzCheck((*outputs)[i].type() == result_types[i], "an output has the wrong type",
              (*outputs)[i].type().ToString() + " vs " + result_types[i].ToString());
  }
  // A second run into caller-provided outputs must give the same bytes (one thread: no
  // reordering; a difference means a read of memory the first run left behind).
  std::vector<accy::Tensor> again;
  for (const accy::TensorType& type : result_types) {
    accy::StatusOr<accy::Tensor> output = accy::Tensor::Allocate(type);
    FuzzCheck(output.ok(), "an output of a result type cannot be allocated", type.ToString());
    again.push_back(std::move(*output));
  }
  const accy::Status second = (*executable)->Run(inputs, again);
  FuzzCheck(second.ok(), "a second Run fails after a first one succeeded", second.ToString());
  for (size_t i = 0; i < again.size(); ++i) {
    const std::span<const uint8_t> first_bytes = std::as_const((*outputs)[i]).bytes();
    const std::span<const uint8_t> second_bytes = std::as_const(again[i]).bytes();
    FuzzCheck(std::equal(first_bytes.begin(), first_bytes.end(), second_bytes.begin(),
                         second_bytes.end()),
              "two runs on the same inputs give different output bytes",
              "result " + std::to_string(i) + " (" + (fused ? "fused" : "unfused") + ")\n" +
                  std::string(text));
  }
  return 0;
}
