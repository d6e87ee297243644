// The generator's kernel_call steps (program_generator.h): matmul, softmax, log_softmax,
// layer_norm, conv2d and the pooling kernels, each with the StableHLO ops of its contract
// (kernels/kernel_contracts.h) for the reference form.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_catalog.h"
#include "src/testing/generator_internal.h"

namespace accy::fuzz::internal {

// The StableHLO ops of a catalog kernel's contract (kernels/kernel_contracts.h), in f32 and
// rounded once to the result type, as the library kernels compute.
StatusOr<Value*> SoftmaxReference(FunctionBuilder& f, Value* x, int64_t axis, bool log) {
  const TensorType type = x->type();
  const TensorType f32 = type.WithElementType(ElementType::kF32);
  ACCY_ASSIGN_OR_RETURN(Value * xf, f.Convert(x, ElementType::kF32));
  const std::vector<int64_t> keep = AllBut(type.rank(), axis);
  ACCY_ASSIGN_OR_RETURN(Value * max, ReduceF(f, xf, "max", {axis}));
  ACCY_ASSIGN_OR_RETURN(Value * max_b, f.BroadcastInDim(max, f32, keep));
  ACCY_ASSIGN_OR_RETURN(Value * shifted, f.Subtract(xf, max_b));
  ACCY_ASSIGN_OR_RETURN(Value * e, f.Exponential(shifted));
  ACCY_ASSIGN_OR_RETURN(Value * sum, ReduceF(f, e, "sum", {axis}));
  ACCY_ASSIGN_OR_RETURN(Value * sum_b, f.BroadcastInDim(sum, f32, keep));
  Value* y;
  if (log) {
    ACCY_ASSIGN_OR_RETURN(Value * log_sum, f.Log(sum_b));
    ACCY_ASSIGN_OR_RETURN(y, f.Subtract(shifted, log_sum));
  } else {
    ACCY_ASSIGN_OR_RETURN(y, f.Divide(e, sum_b));
  }
  return f.Convert(y, type.element_type());
}

namespace {

StatusOr<Value*> LayerNormReference(FunctionBuilder& f, Value* x, Value* scale, Value* shift,
                                    double epsilon) {
  const TensorType type = x->type();
  const TensorType f32 = type.WithElementType(ElementType::kF32);
  const int64_t last = type.rank() - 1;
  const std::vector<int64_t> keep = AllBut(type.rank(), last);
  ACCY_ASSIGN_OR_RETURN(Value * xf, f.Convert(x, ElementType::kF32));
  ACCY_ASSIGN_OR_RETURN(Value * sum, ReduceF(f, xf, "sum", {last}));
  ACCY_ASSIGN_OR_RETURN(Value * count, SplatConstant(f, sum->type(), static_cast<double>(type.dim(last))));
  ACCY_ASSIGN_OR_RETURN(Value * mean, f.Divide(sum, count));
  ACCY_ASSIGN_OR_RETURN(Value * mean_b, f.BroadcastInDim(mean, f32, keep));
  ACCY_ASSIGN_OR_RETURN(Value * centered, f.Subtract(xf, mean_b));
  ACCY_ASSIGN_OR_RETURN(Value * square, f.Multiply(centered, centered));
  ACCY_ASSIGN_OR_RETURN(Value * square_sum, ReduceF(f, square, "sum", {last}));
  ACCY_ASSIGN_OR_RETURN(Value * variance, f.Divide(square_sum, count));
  ACCY_ASSIGN_OR_RETURN(Value * eps, SplatConstant(f, variance->type(), epsilon));
  ACCY_ASSIGN_OR_RETURN(Value * shifted_var, f.Add(variance, eps));
  ACCY_ASSIGN_OR_RETURN(Value * inv, f.Rsqrt(shifted_var));
  ACCY_ASSIGN_OR_RETURN(Value * inv_b, f.BroadcastInDim(inv, f32, keep));
  ACCY_ASSIGN_OR_RETURN(Value * normed, f.Multiply(centered, inv_b));
  ACCY_ASSIGN_OR_RETURN(Value * scale_b, f.BroadcastInDim(scale, f32, {last}));
  ACCY_ASSIGN_OR_RETURN(Value * shift_b, f.BroadcastInDim(shift, f32, {last}));
  ACCY_ASSIGN_OR_RETURN(Value * scaled, f.Multiply(normed, scale_b));
  ACCY_ASSIGN_OR_RETURN(Value * y, f.Add(scaled, shift_b));
  return f.Convert(y, type.element_type());
}

StatusOr<Value*> MatmulReference(FunctionBuilder& f, Value* a, Value* b, bool transpose_a,
                                 bool transpose_b, const TensorType& result) {
  ACCY_ASSIGN_OR_RETURN(Value * af, f.Convert(a, ElementType::kF32));
  ACCY_ASSIGN_OR_RETURN(Value * bf, f.Convert(b, ElementType::kF32));
  const int64_t ra = a->type().rank(), rb = b->type().rank();
  std::vector<int64_t> lb, rbatch;
  if (rb > 2) {
    for (int64_t d = 0; d < ra - 2; ++d) {
      lb.push_back(d);
      rbatch.push_back(d);
    }
  }
  const int64_t lc = transpose_a ? ra - 2 : ra - 1;
  const int64_t rc = transpose_b ? rb - 1 : rb - 2;
  ACCY_ASSIGN_OR_RETURN(Value * dot, f.DotGeneral(af, bf, result.WithElementType(ElementType::kF32),
                                                  {lc}, {rc}, lb, rbatch));
  // A transposed b ([N, K]) leaves N as the last free dim: dot_general's order is already
  // [batch..., M, N] in every case here.
  return f.Convert(dot, result.element_type());
}

// Geometry of a generated conv2d or pooling call (NCHW).
struct Window {
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph_lo, ph_hi, pw_lo, pw_hi, dh = 1, dw = 1;
  int64_t Oh() const { return (h + ph_lo + ph_hi - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t Ow() const { return (w + pw_lo + pw_hi - ((kw - 1) * dw + 1)) / sw + 1; }
};

// The window taps of a padded f32 NCHW tensor: tap (i, j) is the [N, C, OH, OW] strided slice
// every output position reads at window offset (i, j).
StatusOr<Value*> Tap(FunctionBuilder& f, Value* padded, const Window& g, int64_t i, int64_t j) {
  const int64_t r0 = i * g.dh, c0 = j * g.dw;
  return f.Slice(padded, {0, 0, r0, c0},
                 {g.n, g.c, r0 + (g.Oh() - 1) * g.sh + 1, c0 + (g.Ow() - 1) * g.sw + 1},
                 {1, 1, g.sh, g.sw});
}

StatusOr<Value*> PadNchw(FunctionBuilder& f, Value* x, const Window& g, double value) {
  ACCY_ASSIGN_OR_RETURN(Value * pad_value, f.ConstantScalar(ElementType::kF32, value));
  return f.Pad(x, pad_value, {0, 0, g.ph_lo, g.pw_lo}, {0, 0, g.ph_hi, g.pw_hi}, {0, 0, 0, 0});
}

// conv2d (kernels/kernel_contracts.h, NCHW/OIHW, groups 1): sum over taps of
// dot_general(tap [N, C, OH, OW], w[:, :, i, j] [O, C]) -> [N, OH, OW, O], then to NCHW.
StatusOr<Value*> Conv2dReference(FunctionBuilder& f, Value* x, Value* w, Value* bias,
                                 const Window& g) {
  ACCY_ASSIGN_OR_RETURN(Value * xf, f.Convert(x, ElementType::kF32));
  ACCY_ASSIGN_OR_RETURN(Value * wf, f.Convert(w, ElementType::kF32));
  ACCY_ASSIGN_OR_RETURN(Value * padded, PadNchw(f, xf, g, 0));
  const TensorType nhwo = *TensorType::Create(ElementType::kF32, {g.n, g.Oh(), g.Ow(), g.o});
  const TensorType oc = *TensorType::Create(ElementType::kF32, {g.o, g.c});
  Value* sum = nullptr;
  for (int64_t i = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j) {
      ACCY_ASSIGN_OR_RETURN(Value * tap, Tap(f, padded, g, i, j));
      ACCY_ASSIGN_OR_RETURN(Value * wij, f.Slice(wf, {0, 0, i, j}, {g.o, g.c, i + 1, j + 1}, {1, 1, 1, 1}));
      ACCY_ASSIGN_OR_RETURN(Value * w2, f.Reshape(wij, oc));
      ACCY_ASSIGN_OR_RETURN(Value * term, f.DotGeneral(tap, w2, nhwo, {1}, {1}, {}, {}));
      if (sum == nullptr) {
        sum = term;
      } else {
        ACCY_ASSIGN_OR_RETURN(sum, f.Add(sum, term));
      }
    }
  }
  ACCY_ASSIGN_OR_RETURN(Value * nchw, f.Transpose(sum, {0, 3, 1, 2}));
  if (bias != nullptr) {
    ACCY_ASSIGN_OR_RETURN(Value * bf, f.Convert(bias, ElementType::kF32));
    ACCY_ASSIGN_OR_RETURN(Value * bb, f.BroadcastInDim(bf, nchw->type(), {1}));
    ACCY_ASSIGN_OR_RETURN(nchw, f.Add(nchw, bb));
  }
  return f.Convert(nchw, x->type().element_type());
}

// max_pool2d / avg_pool2d: the max (padding never wins) or the mean over taps; without
// count_include_pad the mean divides by the taps inside the input (the same taps of ones).
StatusOr<Value*> Pool2dReference(FunctionBuilder& f, Value* x, const Window& g, bool is_max,
                                 bool count_include_pad) {
  ACCY_ASSIGN_OR_RETURN(Value * xf, f.Convert(x, ElementType::kF32));
  ACCY_ASSIGN_OR_RETURN(Value * padded, PadNchw(f, xf, g, is_max ? -kInf : 0));
  Value* ones_padded = nullptr;
  if (!is_max && !count_include_pad) {
    ACCY_ASSIGN_OR_RETURN(Value * ones, SplatConstant(f, xf->type(), 1));
    ACCY_ASSIGN_OR_RETURN(ones_padded, PadNchw(f, ones, g, 0));
  }
  Value* acc = nullptr;
  Value* count = nullptr;
  for (int64_t i = 0; i < g.kh; ++i) {
    for (int64_t j = 0; j < g.kw; ++j) {
      ACCY_ASSIGN_OR_RETURN(Value * tap, Tap(f, padded, g, i, j));
      if (acc == nullptr) {
        acc = tap;
      } else if (is_max) {
        ACCY_ASSIGN_OR_RETURN(acc, f.Maximum(acc, tap));
      } else {
        ACCY_ASSIGN_OR_RETURN(acc, f.Add(acc, tap));
      }
      if (ones_padded != nullptr) {
        ACCY_ASSIGN_OR_RETURN(Value * one_tap, Tap(f, ones_padded, g, i, j));
        if (count == nullptr) {
          count = one_tap;
        } else {
          ACCY_ASSIGN_OR_RETURN(count, f.Add(count, one_tap));
        }
      }
    }
  }
  if (!is_max) {
    if (count == nullptr) {
      ACCY_ASSIGN_OR_RETURN(count, SplatConstant(f, acc->type(), static_cast<double>(g.kh * g.kw)));
    }
    ACCY_ASSIGN_OR_RETURN(acc, f.Divide(acc, count));
  }
  return f.Convert(acc, x->type().element_type());
}


}  // namespace

bool Generator::StepWindowKernel() {
  const ElementType e = Chance(0.75) ? ElementType::kF32 : ElementType::kBF16;
  const uint64_t which = U(3);  // conv2d, max_pool2d, avg_pool2d
  Window g;
  g.n = 1 + static_cast<int64_t>(U(2));
  g.c = 1 + static_cast<int64_t>(U(6));
  g.h = 1 + static_cast<int64_t>(U(10));
  g.w = 1 + static_cast<int64_t>(U(10));
  g.kh = 1 + static_cast<int64_t>(U(3));
  g.kw = 1 + static_cast<int64_t>(U(3));
  g.sh = 1 + static_cast<int64_t>(U(2));
  g.sw = 1 + static_cast<int64_t>(U(2));
  if (which == 0 && Chance(0.2)) g.dh = g.dw = 2;
  auto pad = [&](int64_t window) {  // pooling: each padding below the window
    return static_cast<int64_t>(U(static_cast<uint64_t>(std::min<int64_t>(window, 2))));
  };
  g.ph_lo = pad(g.kh);
  g.ph_hi = pad(g.kh);
  g.pw_lo = pad(g.kw);
  g.pw_hi = pad(g.kw);
  g.o = which == 0 ? 1 + static_cast<int64_t>(U(6)) : g.c;
  if (g.h + g.ph_lo + g.ph_hi < (g.kh - 1) * g.dh + 1 ||
      g.w + g.pw_lo + g.pw_hi < (g.kw - 1) * g.dw + 1) {
    return false;
  }
  const Need need{true, 100, true};
  const int x = Pick(Type(e, {g.n, g.c, g.h, g.w}), need);
  const TensorType result = Type(e, {g.n, g.o, g.Oh(), g.Ow()});
  const std::vector<int64_t> padding = {g.ph_lo, g.ph_hi, g.pw_lo, g.pw_hi};
  const std::vector<int64_t> strides = {g.sh, g.sw};
  if (which == 0) {
    const int w = Pick(Type(e, {g.o, g.c, g.kh, g.kw}), need);
    const bool has_bias = Chance(0.5);
    std::vector<int> operands = {x, w};
    if (has_bias) operands.push_back(Pick(Type(ElementType::kF32, {g.o}), need));
    FuzzValue v = Derive(operands, result, false,
                         V(x).bound * V(w).bound * static_cast<double>(g.c * g.kh * g.kw) +
                             (has_bias ? V(operands[2]).bound : 0),
                         false);
    AddRecipe("kernel_call:" + std::string(kernels::kConv2dTarget), operands, {v},
              [g, padding, strides, result](FunctionBuilder& f, std::span<Value* const> xs,
                                            BuildForm form) -> StatusOr<std::vector<Value*>> {
                Value* bias = xs.size() == 3 ? xs[2] : nullptr;
                if (form == BuildForm::kReference) {
                  ACCY_ASSIGN_OR_RETURN(Value * r, Conv2dReference(f, xs[0], xs[1], bias, g));
                  return std::vector<Value*>{r};
                }
                KernelCallSpec spec;
                spec.target = std::string(kernels::kConv2dTarget);
                spec.attributes = {{"strides", strides}, {"padding", padding},
                                   {"dilation", std::vector<int64_t>{g.dh, g.dw}}};
                ACCY_ASSIGN_OR_RETURN(Operation * call, f.KernelCall(
                    std::vector<Value*>(xs.begin(), xs.end()), {result}, spec));
                return std::vector<Value*>{call->result(0)};
              });
    return true;
  }
  const bool is_max = which == 1;
  const bool count_include_pad = !is_max && Chance(0.5);
  const std::string target(is_max ? kernels::kMaxPool2dTarget : kernels::kAvgPool2dTarget);
  FuzzValue v = Derive({x}, result, is_max, V(x).bound, false);
  if (is_max) v.exact = false, v.tolerance = ApproximateTolerance(e);  // f32 staging of bf16
  AddRecipe("kernel_call:" + target, {x}, {v},
            [g, padding, strides, result, target, is_max, count_include_pad](
                FunctionBuilder& f, std::span<Value* const> xs,
                BuildForm form) -> StatusOr<std::vector<Value*>> {
              if (form == BuildForm::kReference) {
                ACCY_ASSIGN_OR_RETURN(Value * r,
                                      Pool2dReference(f, xs[0], g, is_max, count_include_pad));
                return std::vector<Value*>{r};
              }
              KernelCallSpec spec;
              spec.target = target;
              spec.attributes = {{"window", std::vector<int64_t>{g.kh, g.kw}},
                                 {"strides", strides}, {"padding", padding}};
              if (!is_max) spec.attributes.push_back({"count_include_pad", count_include_pad});
              ACCY_ASSIGN_OR_RETURN(Operation * call, f.KernelCall({xs[0]}, {result}, spec));
              return std::vector<Value*>{call->result(0)};
            });
  return true;
}

bool Generator::StepKernelCall() {
  const ElementType e = Chance(0.7) ? ElementType::kF32 : Chance(0.85) ? ElementType::kBF16 : ElementType::kF16;
  const Need need{true, 1e3, true};
  const uint64_t which = U(4);
  if (which <= 1) {  // softmax, log_softmax
    const bool log = which == 1;
    const TensorType type = Type(e, RandomDims(1, 3));
    const int64_t axis = static_cast<int64_t>(U(static_cast<uint64_t>(type.rank())));
    const int x = Pick(type, need);
    FuzzValue v = Derive({x}, type, false, log ? 2 * V(x).bound + 10 : 1, false);
    const std::string target(log ? kernels::kLogSoftmaxTarget : kernels::kSoftmaxTarget);
    // Spelled from the back half the time (axis -1 is the contract's default).
    const int64_t written = Chance(0.5) ? axis - type.rank() : axis;
    AddRecipe("kernel_call:" + target, {x}, {v},
              [target, axis, written, log, type](FunctionBuilder& f, std::span<Value* const> xs,
                                                 BuildForm form) -> StatusOr<std::vector<Value*>> {
                if (form == BuildForm::kReference) {
                  ACCY_ASSIGN_OR_RETURN(Value * r, SoftmaxReference(f, xs[0], axis, log));
                  return std::vector<Value*>{r};
                }
                KernelCallSpec spec;
                spec.target = target;
                spec.attributes = {{"axis", written}};
                ACCY_ASSIGN_OR_RETURN(Operation * call, f.KernelCall({xs[0]}, {type}, spec));
                return std::vector<Value*>{call->result(0)};
              });
    return true;
  }
  if (which == 2) {  // layer_norm
    std::vector<int64_t> dims = RandomDims(1, 3);
    if (dims.back() < 2) {
      dims.back() = 2 + static_cast<int64_t>(U(30));
      // Halve the largest leading dim until the count is back under max_elements.
      auto count = [&] {
        int64_t c = 1;
        for (int64_t d : dims) c *= d;
        return c;
      };
      while (dims.size() > 1 && count() > options_.max_elements) {
        auto largest = std::max_element(dims.begin(), dims.end() - 1);
        if (*largest == 1) break;
        *largest = (*largest + 1) / 2;
      }
    }
    const TensorType type = Type(e, dims);
    const double epsilon = IsFloat(e) && ElementBitWidth(e) == 16 ? 1e-2 : Chance(0.5) ? 1e-5 : 1e-3;
    const int x = Pick(type, need);
    const int scale = Pick(Type(ElementType::kF32, {dims.back()}), need);
    const int shift = Pick(Type(ElementType::kF32, {dims.back()}), need);
    FuzzValue v = Derive({x, scale, shift}, type, false,
                         std::sqrt(static_cast<double>(dims.back())) * V(scale).bound + V(shift).bound,
                         false);
    AddRecipe("kernel_call:" + std::string(kernels::kLayerNormTarget), {x, scale, shift}, {v},
              [type, epsilon](FunctionBuilder& f, std::span<Value* const> xs,
                              BuildForm form) -> StatusOr<std::vector<Value*>> {
                if (form == BuildForm::kReference) {
                  ACCY_ASSIGN_OR_RETURN(Value * r, LayerNormReference(f, xs[0], xs[1], xs[2], epsilon));
                  return std::vector<Value*>{r};
                }
                KernelCallSpec spec;
                spec.target = std::string(kernels::kLayerNormTarget);
                spec.attributes = {{"epsilon", epsilon}};
                ACCY_ASSIGN_OR_RETURN(Operation * call,
                                      f.KernelCall({xs[0], xs[1], xs[2]}, {type}, spec));
                return std::vector<Value*>{call->result(0)};
              });
    return true;
  }
  // matmul: a [B.., M, K] (transpose_a: [B.., K, M]) x b [K, N] or [B.., K, N] (transpose_b:
  // N and K swapped).
  static constexpr int64_t kSizes[] = {1, 2, 3, 5, 8, 16, 17, 33, 64};
  const int64_t m = kSizes[U(std::size(kSizes))], k = kSizes[U(std::size(kSizes))],
                n = kSizes[U(std::size(kSizes))];
  std::vector<int64_t> batch;
  if (Chance(0.4)) batch.push_back(1 + static_cast<int64_t>(U(3)));
  const bool ta = Chance(0.3), tb = Chance(0.3), shared_b = batch.empty() || Chance(0.5);
  std::vector<int64_t> a = batch, b = shared_b ? std::vector<int64_t>{} : batch, r = batch;
  a.push_back(ta ? k : m);
  a.push_back(ta ? m : k);
  b.push_back(tb ? n : k);
  b.push_back(tb ? k : n);
  r.push_back(m);
  r.push_back(n);
  const ElementType result_e = e != ElementType::kF32 && Chance(0.3) ? ElementType::kF32 : e;
  const TensorType result = Type(result_e, r);
  const int lhs = Pick(Type(e, a), need);
  const int rhs = Pick(Type(e, b), need);
  FuzzValue v = Derive({lhs, rhs}, result, false,
                       V(lhs).bound * V(rhs).bound * static_cast<double>(k), false);
  AddRecipe("kernel_call:" + std::string(kernels::kMatmulTarget), {lhs, rhs}, {v},
            [result, ta, tb](FunctionBuilder& f, std::span<Value* const> xs,
                             BuildForm form) -> StatusOr<std::vector<Value*>> {
              if (form == BuildForm::kReference) {
                ACCY_ASSIGN_OR_RETURN(Value * out, MatmulReference(f, xs[0], xs[1], ta, tb, result));
                return std::vector<Value*>{out};
              }
              KernelCallSpec spec;
              spec.target = std::string(kernels::kMatmulTarget);
              spec.attributes = {{"transpose_a", ta}, {"transpose_b", tb}};
              ACCY_ASSIGN_OR_RETURN(Operation * call, f.KernelCall({xs[0], xs[1]}, {result}, spec));
              return std::vector<Value*>{call->result(0)};
            });
  return true;
}

}  // namespace accy::fuzz::internal
