// The window ops through the shape emitter (jit/window_emitter.cc) -- reduce_window (named and
// general bodies, strides, base and window dilations, positive and negative padding, zero-size
// dims, rank 0, windows larger than the input, init values folded or read from a buffer, two
// inputs in one kernel; each also over a trailing dim the window does not extend along, the
// vectorized channel-last form) and select_and_scatter (max-pool gradients with overlapping
// windows, padding, windows entirely in the padding) -- x every element type, through the JIT
// and the reference evaluator, compared bit for bit (tolerance 0: both combine one window
// position at a time in the element type, in the same order).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/jit/shape_test_util.h"

namespace accy::jit::testing {
namespace {

using Dims = std::vector<int64_t>;
using E = ElementType;

// The init value of a named reducer as JAX writes it: -inf / +inf for float max / min (the
// pooling identity), the type's extreme for integer max / min, 0 for sums, 1 for products.
double InitFor(const std::string& reducer, ElementType type) {
  if (reducer == "sum" || reducer == "or") return 0;
  if (reducer == "prod" || reducer == "and") return IsBool(type) ? 1 : (reducer == "and" ? -1 : 1);
  const bool max = reducer == "max";
  if (IsFloat(type)) return max ? -INFINITY : INFINITY;
  if (IsBool(type)) return max ? 0 : 1;
  if (IsUnsigned(type)) return max ? 0 : 200;
  return max ? -100 : 100;
}

// reduce_window of one input with a named reducer and a constant init value; `init_buffer` takes
// the init value from a rank-0 parameter instead.
ShapeVariant Window(Dims input, WindowOptions window, std::string reducer,
                    bool init_buffer = false) {
  std::vector<Dims> data = {input};
  if (init_buffer) data.push_back({});
  return {data,
          {},
          [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            Value* init = nullptr;
            if (init_buffer) {
              init = x[1];
            } else {
              ACCY_ASSIGN_OR_RETURN(init, f.ConstantScalar(type, InitFor(reducer, type)));
            }
            return f.ReduceWindow(x[0], init, window, reducer);
          }};
}

WindowOptions W(Dims dims, Dims strides = {}, std::vector<std::pair<int64_t, int64_t>> padding = {},
                Dims base = {}, Dims dilations = {}) {
  return {dims, strides, base, dilations, padding};
}

std::vector<ShapeVariant> ReduceWindowVariants(const std::string& reducer) {
  return {
      Window({4, 6}, W({2, 2}), reducer),
      // 3x3/2 max pool with SAME padding, NHWC.
      Window({1, 9, 9, 3}, W({1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}),
             reducer),
      // The spec's example: base dilations, window dilations, strides and padding at once.
      Window({3, 2}, W({2, 1}, {4, 1}, {{2, 1}, {0, 0}}, {2, 1}, {3, 1}), reducer),
      Window({5, 7}, W({3, 2}, {2, 3}, {{1, 2}, {0, 1}}, {3, 2}, {2, 2}), reducer),
      // JAX's cumulative reductions: window 8 with 7 padding below.
      Window({8, 3}, W({8, 1}, {}, {{7, 0}, {0, 0}}), reducer),
      // Negative padding crops the input.
      Window({7, 5}, W({2, 2}, {1, 2}, {{-1, -2}, {0, 1}}), reducer),
      // Zero-size input dims: no windows, or windows of padding only (all init values).
      Window({0, 5}, W({1, 2}), reducer),
      Window({0, 3}, W({1, 1}, {}, {{1, 1}, {0, 0}}), reducer),
      // A window larger than the input: no windows.
      Window({3}, W({5}), reducer),
      // Rank 0: one window of one element.
      Window({}, W({}), reducer),
      // The init value read from a buffer.
      Window({6, 4}, W({3, 2}, {1, 1}, {{1, 1}, {1, 0}}), reducer, /*init_buffer=*/true),
      // More output elements than one block.
      Window({130, 130}, W({2, 2}, {1, 1}), reducer),
      // A channel-last window (the last dim has window 1, stride 1, no padding or dilation:
      // the vectorized form of window_emitter.cc; the NHWC pooling above is one too) with base
      // and window dilations and negative padding on the outer dims, over 6 x 128 x 37 outputs:
      // more than one block, rows split between blocks (8192 is not a multiple of 37).
      Window({7, 130, 37}, W({2, 3, 1}, {2, 1, 1}, {{-1, 1}, {2, 0}, {0, 0}}, {2, 1, 1}, {1, 2, 1}),
             reducer),
  };
}

// Named reducers the element type allows (and/or only on i1 and integers).
std::vector<std::string> ReducersFor(ElementType type) {
  if (IsFloat(type)) return {"sum", "max", "min", "prod"};
  return {"sum", "max", "min", "prod", "and", "or"};
}

TEST(ReduceWindowEmitterTest, NamedBodiesMatchReferenceForEveryElementType) {
  for (ElementType type : kAllElementTypes) {
    for (const std::string& reducer : ReducersFor(type)) {
      CheckVariants("reduce_window " + reducer, type, ReduceWindowVariants(reducer));
    }
  }
}

// A general body: acc * 0.5 + x * x (floats) or (acc ^ x) + 1 (integers): neither associative
// nor commutative, so any change of the visiting order shows.
TEST(ReduceWindowEmitterTest, GeneralBodiesMatchReference) {
  for (ElementType type : {E::kF32, E::kF64, E::kBF16, E::kF16, E::kI32, E::kU8, E::kI64}) {
    for (bool channel_last : {false, true}) {
      // channel_last: the same window over a trailing dim of 5 it does not extend along.
      const WindowOptions window =
          channel_last ? W({3, 2, 1}, {2, 1, 1}, {{1, 1}, {0, 1}, {0, 0}}, {2, 1, 1}, {1, 2, 1})
                       : W({3, 2}, {2, 1}, {{1, 1}, {0, 1}}, {2, 1}, {1, 2});
      ShapeVariant variant{
          {channel_last ? Dims{7, 6, 5} : Dims{7, 6}},
          {},
          [=](FunctionBuilder& f, ElementType t, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(t, 3));
            auto body = [t](FunctionBuilder& b, std::span<Value* const> a) -> Status {
              Value* out = nullptr;
              if (IsFloat(t)) {
                ACCY_ASSIGN_OR_RETURN(Value * half, b.ConstantScalar(t, 0.5));
                ACCY_ASSIGN_OR_RETURN(Value * scaled, b.Multiply(a[0], half));
                ACCY_ASSIGN_OR_RETURN(Value * square, b.Multiply(a[1], a[1]));
                ACCY_ASSIGN_OR_RETURN(out, b.Add(scaled, square));
              } else {
                ACCY_ASSIGN_OR_RETURN(Value * one, b.ConstantScalar(t, 1));
                ACCY_ASSIGN_OR_RETURN(Value * mixed, b.Xor(a[0], a[1]));
                ACCY_ASSIGN_OR_RETURN(out, b.Add(mixed, one));
              }
              return b.Return({out});
            };
            ACCY_ASSIGN_OR_RETURN(std::vector<Value*> r,
                                  f.ReduceWindow({x[0]}, {init}, window, body));
            return r[0];
          }};
      CheckVariants(channel_last ? "reduce_window general body, channel last"
                                 : "reduce_window general body",
                    type, {variant});
    }
  }
}

// argmax pooling: (value, index) pairs with the larger value (the first on ties) win; two
// outputs of one kernel.
TEST(ReduceWindowEmitterTest, VariadicArgmaxMatchesReference) {
  for (ElementType type : {E::kF32, E::kBF16, E::kI16, E::kU32}) {
    // channel_last: over a trailing dim of 4 the window does not extend along.
    for (bool channel_last : {false, true}) {
      SCOPED_TRACE(std::string(ElementTypeName(type)) + (channel_last ? " channel last" : ""));
      Builder builder("argmax");
      const Dims in_dims = channel_last ? Dims{6, 8, 4} : Dims{6, 8};
      const Dims out_dims = channel_last ? Dims{3, 4, 4} : Dims{3, 4};
      const TensorType x = TensorType::Create(type, in_dims).value();
      const TensorType idx = TensorType::Create(E::kI32, in_dims).value();
      const WindowOptions window = channel_last ? W({2, 3, 1}, {2, 2, 1}, {{0, 0}, {1, 1}, {0, 0}})
                                                : W({2, 3}, {2, 2}, {{0, 0}, {1, 1}});
      const TensorType vout = TensorType::Create(type, out_dims).value();
      const TensorType iout = TensorType::Create(E::kI32, out_dims).value();
      auto f = builder.BeginFunction("main", {x, idx}, {vout, iout}).value();
      ASSERT_OK_AND_ASSIGN(Value * vinit, f.ConstantScalar(type, InitFor("max", type)));
      ASSERT_OK_AND_ASSIGN(Value * iinit, f.ConstantScalar(E::kI32, -1));
      auto body = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
        // a = (acc value, acc index, value, index)
        ACCY_ASSIGN_OR_RETURN(Value * keep, b.Compare(a[0], a[2], "GE"));
        ACCY_ASSIGN_OR_RETURN(Value * v, b.Select(keep, a[0], a[2]));
        ACCY_ASSIGN_OR_RETURN(Value * i, b.Select(keep, a[1], a[3]));
        return b.Return({v, i});
      };
      ASSERT_OK_AND_ASSIGN(std::vector<Value*> out,
                           f.ReduceWindow({f.Parameter(0), f.Parameter(1)}, {vinit, iinit}, window,
                                          body));
      ASSERT_OK(f.Return(out));
      ASSERT_OK_AND_ASSIGN(auto module, builder.Finish());
      std::vector<Tensor> args = {MakeInput(x, 3), MakeInput(idx, 4)};
      ASSERT_OK_AND_ASSIGN(auto expected, Evaluate(*module, "main", args));
      ASSERT_OK_AND_ASSIGN(auto program, JitProgram::Create(std::move(module)));
      ASSERT_EQ(program->compiled().items().size(), 1u);
      EXPECT_EQ(program->compiled().items()[0].outputs.size(), 2u);
      ASSERT_OK_AND_ASSIGN(auto actual, program->Run(args, 2));
      for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(SameBits(actual[i], expected[i])) << i;
    }
  }
}

// select_and_scatter with select = compare `direction` and scatter = add, init 0.
ShapeVariant SelectScatter(Dims operand, Dims source, WindowOptions window,
                           std::string direction) {
  return {{operand, source},
          {},
          [=](FunctionBuilder& f, ElementType type, const std::vector<Value*>& x,
              const std::vector<Value*>&) -> StatusOr<Value*> {
            ACCY_ASSIGN_OR_RETURN(Value * init, f.ConstantScalar(type, 0));
            auto select = [direction](FunctionBuilder& b, std::span<Value* const> a) -> Status {
              ACCY_ASSIGN_OR_RETURN(Value * keep, b.Compare(a[0], a[1], direction));
              return b.Return({keep});
            };
            auto scatter = [](FunctionBuilder& b, std::span<Value* const> a) -> Status {
              ACCY_ASSIGN_OR_RETURN(Value * sum, b.Add(a[0], a[1]));
              return b.Return({sum});
            };
            return f.SelectAndScatter(x[0], x[1], init, window, select, scatter);
          }};
}

TEST(SelectAndScatterEmitterTest, MaxPoolGradientsMatchReferenceForEveryElementType) {
  const std::vector<ShapeVariant> variants = {
      // The spec's example: overlapping windows, padding below.
      SelectScatter({4, 2}, {2, 2}, W({3, 1}, {2, 1}, {{0, 1}, {0, 0}}), "GE"),
      SelectScatter({1, 8, 8, 3}, {1, 4, 4, 3}, W({1, 2, 2, 1}, {1, 2, 2, 1}), "GE"),
      SelectScatter({1, 7, 7, 2}, {1, 4, 4, 2},
                    W({1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}), "GT"),
      SelectScatter({5, 5}, {6, 6}, W({2, 2}, {1, 1}, {{1, 1}, {1, 1}}), "LE"),
      // Windows 0 and 1 lie entirely in the padding: their source elements are dropped.
      SelectScatter({2}, {4}, W({2}, {1}, {{3, 0}}), "GE"),
      SelectScatter({0, 3}, {0, 3}, W({1, 1}), "GE"),
      SelectScatter({}, {}, W({}), "GE"),
      SelectScatter({100, 90}, {50, 45}, W({2, 2}, {2, 2}), "GE"),
      // Tiling windows over a batch of 3 (a block per batch index) that leave the last row and
      // column of the operand outside every window (those keep init).
      SelectScatter({3, 7, 5, 4}, {3, 3, 2, 4}, W({1, 2, 2, 1}, {1, 2, 2, 1}), "GE"),
      // Overlapping windows over a batch of 3: a block per batch index, the scatter path.
      SelectScatter({3, 6, 6, 2}, {3, 2, 2, 2}, W({1, 3, 3, 1}, {1, 2, 2, 1}), "GT"),
  };
  for (ElementType type : kAllElementTypes) {
    CheckVariants("select_and_scatter", type, variants);
  }
}

}  // namespace
}  // namespace accy::jit::testing
