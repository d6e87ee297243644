// rng_bit_generator through the engine (kernels/random123_rng_bit_generator.cc: Random123's
// threefry2x32 and philox4x32 as a library item) vs the reference evaluator's own rounds
// (src/reference/rng_bit_generator.cc), bit for bit: every algorithm and state size, 8- to
// 64-bit integer and float outputs, shapes that are empty, scalar, odd in every dim or split in
// the middle, and one large enough for the kernel's parallel blocks, at 1 and 2 threads; state
// counters that wrap; a generator threaded through a while loop; the conformance suite's
// scalar vector; and the binding itself (a "library" item with Random123's implementation name,
// and its errors for ops the verifier would reject).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accy/builder.h"
#include "accy/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/onednn_bindings.h"
#include "kernels/onednn_kernel.h"
#include "src/reference/reference_evaluator.h"
#include "src/schedule/schedule_plan.h"
#include "src/util/str_cat.h"
#include "tests/kernels/kernels_test_util.h"
#include "tests/schedule/schedule_test_util.h"

namespace accy::kernels_test {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;
using ::testing::HasSubstr;

struct Case {
  std::string algorithm;
  std::vector<uint64_t> state;
  E type;
  Dims dims;
};

std::string Describe(const Case& c) {
  std::string state;
  for (uint64_t word : c.state) state += StrCat(word, " ");
  return StrCat(c.algorithm, " state [", state, "] ", T(c.type, c.dims).ToString());
}

// main(state) -> rng_bit_generator(state).
std::unique_ptr<Module> Program(const Case& c) {
  Builder builder("rng_bit_generator_test");
  const TensorType state = T(E::kU64, {static_cast<int64_t>(c.state.size())});
  FunctionBuilder f =
      *builder.BeginFunction("main", {state}, {state, T(c.type, c.dims)});
  StatusOr<std::vector<Value*>> results =
      f.RngBitGenerator(f.Parameter(0), c.algorithm, T(c.type, c.dims));
  EXPECT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(f.Return(*results).ok());
  return *builder.Finish();
}

Tensor State(const std::vector<uint64_t>& words) {
  return Tensor::FromVector(T(E::kU64, {static_cast<int64_t>(words.size())}), words).value();
}

// Compiles and runs main on the engine with `threads`; the plan holds `library_items`
// rng_bit_generator items and nothing runs on the JIT unless `jit_allowed`.
std::vector<Tensor> RunEngine(const Module& module, const std::vector<Tensor>& inputs,
                              int threads, int64_t library_items = 1, bool jit_allowed = false) {
  EngineOptions options;
  options.num_threads = threads;
  options.reduce_threads_under_load = false;
  options.enable_profiling = true;
  std::unique_ptr<Engine> engine = Engine::Create(options).value();
  StatusOr<std::unique_ptr<Executable>> exe = engine->Compile(module);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  StatusOr<std::vector<Tensor>> outputs = (*exe)->Run(inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  const ExecutableStats stats = (*exe)->Stats();
  if (library_items > 0) {
    EXPECT_EQ(stats.work_items_by_kind.at("rng_bit_generator"), library_items);
    for (const ItemProfile& profile : stats.item_profiles) {
      if (profile.kind == "rng_bit_generator") {
        EXPECT_EQ(profile.runs_on, "library");
      }
    }
  }
  if (!jit_allowed) {
    EXPECT_EQ(stats.jit_items, 0);
  }
  return outputs.ok() ? *std::move(outputs) : std::vector<Tensor>{};
}

// Both results the same bytes as the reference evaluator's, reporting the first bad element.
void ExpectSameBits(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t r = 0; r < want.size(); ++r) {
    ASSERT_EQ(got[r].type(), want[r].type()) << what << " result " << r;
    const int64_t width = ElementByteWidth(want[r].element_type());
    for (int64_t i = 0; i < want[r].element_count(); ++i) {
      if (std::memcmp(static_cast<const uint8_t*>(got[r].data()) + i * width,
                      static_cast<const uint8_t*>(want[r].data()) + i * width,
                      static_cast<size_t>(width)) != 0) {
        ADD_FAILURE() << what << ": result " << r << " element " << i << " differs from the "
                      << "reference (engine " << got[r].GetAsDouble(i) << ", reference "
                      << want[r].GetAsDouble(i) << ")";
        return;
      }
    }
  }
}

void ExpectMatchesReference(const Case& c, int threads) {
  std::unique_ptr<Module> module = Program(c);
  const std::vector<Tensor> inputs = {State(c.state)};
  const std::vector<Tensor> engine = RunEngine(*module, inputs, threads);
  StatusOr<std::vector<Tensor>> reference = Evaluate(*module, "main", inputs);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ExpectSameBits(engine, *reference, StrCat(Describe(c), " at ", threads, " threads"));
}

constexpr uint64_t kKey = 0x0123456789ABCDEFull;

const std::vector<Dims> kShapes = {{0}, {}, {1}, {5}, {3, 3}, {2, 3}, {3, 0}, {7, 1, 3},
                                   {3, 4, 5}, {1, 9, 2}, {5, 7}};
const E kTypes[] = {E::kU8, E::kU16, E::kU32, E::kU64, E::kI8, E::kI32, E::kF16, E::kBF16,
                    E::kF32, E::kF64};

TEST(Random123RngBitGeneratorTest, EveryAlgorithmTypeAndShapeMatchesReferenceAtOneAndTwoThreads) {
  // Counters near 2^64, so that the blocks of the larger shapes wrap (THREE_FRY) or carry into
  // the high word (PHILOX).
  struct State {
    std::string algorithm;
    std::vector<uint64_t> state;
  };
  const State states[] = {{"THREE_FRY", {kKey, 0xFFFFFFFFFFFFFFFDu}},
                          {"PHILOX", {kKey, 0xFFFFFFFFFFFFFFFEu}},
                          {"PHILOX", {kKey, 0xFFFFFFFFFFFFFFFEu, 41}},
                          {"DEFAULT", {7, 8, 9}}};
  for (const State& state : states) {
    for (E type : kTypes) {
      for (const Dims& dims : kShapes) {
        for (int threads : {1, 2}) {
          ExpectMatchesReference({state.algorithm, state.state, type, dims}, threads);
        }
      }
    }
  }
}

TEST(Random123RngBitGeneratorTest, LargeOutputsRunParallelBlocksWithTheSameBits) {
  // [301, 300] u32: 45,150 THREE_FRY blocks and 22,575 PHILOX blocks, above the kernel's
  // parallel threshold (2^14 blocks); [3, 20001] u64: 60,003 blocks, an odd split-free shape.
  const std::vector<Case> cases = {{"THREE_FRY", {kKey, 123}, E::kU32, {301, 300}},
                                   {"THREE_FRY", {kKey, 123}, E::kF16, {301, 301}},
                                   {"THREE_FRY", {kKey, 123}, E::kU64, {3, 20001}},
                                   {"PHILOX", {kKey, 5, 6}, E::kU32, {301, 300}},
                                   {"PHILOX", {kKey, 5}, E::kF64, {3, 20001}}};
  for (const Case& c : cases) {
    ExpectMatchesReference(c, 1);
    ExpectMatchesReference(c, 2);
  }
}

TEST(Random123RngBitGeneratorTest, ConformanceScalarVectorThroughTheEngine) {
  // testdata/rng_bit_generator_uint64_2.mlir: XLA:CPU's bits.
  std::unique_ptr<Module> module = Program({"THREE_FRY", {3, 3}, E::kU64, {}});
  const std::vector<Tensor> out = RunEngine(*module, {State({3, 3})}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data_as<uint64_t>()[0], 3u);
  EXPECT_EQ(out[0].data_as<uint64_t>()[1], 4u);
  EXPECT_EQ(out[1].data_as<uint64_t>()[0], 3349939604322698703u);
}

TEST(Random123RngBitGeneratorTest, StateThreadedThroughAWhileLoopMatchesReference) {
  // Three trips of (state, acc) -> (output_state, acc ^ output): each trip draws from the state
  // the previous one returned, inside the loop body's own executable.
  for (const std::string algorithm : {"THREE_FRY", "PHILOX"}) {
    Builder builder("rng_loop");
    const TensorType state = T(E::kU64, {2});
    const TensorType words = T(E::kU32, {3, 5});
    FunctionBuilder f = *builder.BeginFunction("main", {state}, {state, words});
    Value* zero = *f.ConstantScalar(E::kI32, 0);
    Value* acc = *f.Constant(Tensor::Filled(words, 0).value());
    StatusOr<std::vector<Value*>> loop = f.While(
        {zero, f.Parameter(0), acc},
        [](FunctionBuilder& b, std::span<Value* const> args) -> Status {
          ACCY_ASSIGN_OR_RETURN(Value * three, b.ConstantScalar(E::kI32, 3));
          ACCY_ASSIGN_OR_RETURN(Value * more, b.Compare(args[0], three, "LT"));
          return b.Return({more});
        },
        [&](FunctionBuilder& b, std::span<Value* const> args) -> Status {
          ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(E::kI32, 1));
          ACCY_ASSIGN_OR_RETURN(Value * next, b.Add(args[0], one));
          ACCY_ASSIGN_OR_RETURN(std::vector<Value*> drawn,
                                b.RngBitGenerator(args[1], algorithm, words));
          ACCY_ASSIGN_OR_RETURN(Value * mixed, b.Xor(args[2], drawn[1]));
          return b.Return({next, drawn[0], mixed});
        });
    ASSERT_TRUE(loop.ok()) << loop.status();
    ASSERT_OK(f.Return({(*loop)[1], (*loop)[2]}));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Finish());
    const std::vector<Tensor> inputs = {State({kKey, 77})};
    const std::vector<Tensor> engine =
        RunEngine(*module, inputs, 2, /*library_items=*/0, /*jit_allowed=*/true);
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> reference, Evaluate(*module, "main", inputs));
    ExpectSameBits(engine, reference, algorithm + " in a while loop");
    ASSERT_EQ(engine.size(), 2u);
    // THREE_FRY's [3, 5] u32 layout splits dim 1 (no even dim; the largest) into [3, 3] blocks,
    // PHILOX's 15 elements take 4 blocks: 3 trips of each.
    EXPECT_EQ(engine[0].data_as<uint64_t>()[1], 77u + 3 * (algorithm == "THREE_FRY" ? 9 : 4));
  }
}

TEST(Random123RngBitGeneratorTest, BindsAsARandom123LibraryKernel) {
  const struct {
    Case c;
    std::string implementation;
  } cases[] = {{{"THREE_FRY", {kKey, 9}, E::kU32, {4, 3}}, "random123:threefry2x32-20"},
               {{"PHILOX", {kKey, 9, 1}, E::kU64, {5}}, "random123:philox4x32-10"},
               {{"DEFAULT", {kKey, 9}, E::kBF16, {5}}, "random123:philox4x32-10"}};
  for (const auto& [c, implementation] : cases) {
    SCOPED_TRACE(Describe(c));
    std::unique_ptr<Module> owned = Program(c);
    const Module& module = *owned;
    testing_util::PlannedModule planned(std::move(owned), "main");
    ASSERT_OK_AND_ASSIGN(const SchedulePlan* plan, planned.Plan());
    ASSERT_EQ(plan->work_item_count(), 1);
    const WorkItem& item = plan->items()[0];
    EXPECT_EQ(item.kind, WorkKind::kRngBitGenerator);
    ASSERT_OK_AND_ASSIGN(kernels::LibraryKernel kernel,
                         kernels::LibraryKernel::Create(item, nullptr));
    EXPECT_EQ(kernel.implementation(), implementation);
    EXPECT_THAT(kernel.name(), ::testing::StartsWith("rng_bit_generator %"));
    ASSERT_EQ(kernel.inputs().size(), 1u);
    EXPECT_EQ(kernel.inputs()[0], planned.function().entry_block()->argument(0));
    ASSERT_EQ(kernel.outputs().size(), 2u);
    EXPECT_EQ(kernel.outputs()[0], item.root->result(0));
    EXPECT_EQ(kernel.outputs()[1], item.root->result(1));
    EXPECT_EQ(kernel.output_aliases()[0], -1);
    EXPECT_EQ(kernel.output_aliases()[1], -1);
    const std::vector<Tensor> args = {State(c.state)};
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> out, RunKernel(kernel, args));
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> want, Evaluate(module, "main", args));
    ExpectSameBits(out, want, "RunKernel");
    // Wrong buffer sizes are refused naming the buffer.
    void* buffers[] = {out[0].data(), out[0].data(), out[1].data()};
    const int64_t bytes[] = {out[0].byte_size(), out[0].byte_size(), out[1].byte_size() - 1};
    const Status status = kernel.Run(buffers, bytes, 3);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("buffer 2 has"));
  }
}

TEST(Random123RngBitGeneratorTest, BindingRefusesOpsTheVerifierRejects) {
  // Unverified ops (Operation::Create does not verify) over a verified module's state value.
  std::unique_ptr<Module> module = Program({"THREE_FRY", {1, 2}, E::kU32, {4}});
  Value* state = module->functions().front()->entry_block()->argument(0);  // tensor<2xui64>
  auto make = [&](OpKind kind, std::vector<TensorType> results, std::string algorithm) {
    return Operation::Create(kind, {state}, results, {{"rng_algorithm", algorithm}});
  };
  const std::unique_ptr<Operation> other =
      make(OpKind::kAbs, {T(E::kU64, {2})}, "THREE_FRY");
  Status status = kernels::BindRngBitGenerator(*other).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("BindRngBitGenerator: abs is not a verified rng_bit_generator"));
  const std::unique_ptr<Operation> unknown =
      make(OpKind::kRngBitGenerator, {T(E::kU64, {2}), T(E::kU32, {4})}, "MERSENNE");
  status = kernels::BindRngBitGenerator(*unknown).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr(": rng_algorithm 'MERSENNE' with initial_state tensor<2xui64> is not "
                        "supported (THREE_FRY: 2 x ui64; PHILOX, DEFAULT: 2 or 3 x ui64)"));
  const std::unique_ptr<Operation> boolean =
      make(OpKind::kRngBitGenerator, {T(E::kU64, {2}), T(E::kI1, {4})}, "PHILOX");
  status = kernels::BindRngBitGenerator(*boolean).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr(": output element type i1 is not supported (integer "
                                          "or float types)"));
}

}  // namespace
}  // namespace accy::kernels_test
