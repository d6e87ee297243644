// Activation patterns in dot_epilogue clusters (kernels/epilogue_patterns.h).
#include "kernels/epilogue_patterns.h"

#include <algorithm>
#include <cmath>

#include "accy/tensor.h"
#include "src/fusion/fusion_plan.h"

namespace accy::kernels {
namespace {

// Matching state: the cluster, the activation input and the ops claimed so far.
struct Matcher {
  const Value* x;
  std::span<const Operation* const> cluster;
  const FusionPlan* fusion;
  std::vector<const Operation*> claimed;

  bool InCluster(const Operation* op) const {
    return op != nullptr && std::find(cluster.begin(), cluster.end(), op) != cluster.end();
  }
  // The in-cluster op defining `v` that may be absorbed (not x itself), or null.
  const Operation* Absorbable(const Value* v, OpKind kind) const {
    if (v == x) return nullptr;
    const Operation* def = v->defining_op();
    return InCluster(def) && def->kind() == kind ? def : nullptr;
  }
  bool Near(double actual, double expected, const Value* constant) const {
    const ElementType type = constant->type().element_type();
    const double tol = (type == ElementType::kF32 || type == ElementType::kF64) ? 1e-6 : 1.0 / 256;
    return std::fabs(actual - expected) <= tol * std::fabs(expected);
  }

  // Factors of a product tree rooted at `v`, constants folded into `scale`.
  void Product(const Value* v, std::vector<const Value*>& factors, double& scale,
               const Value*& last_constant) {
    if (const Operation* mul = Absorbable(v, OpKind::kMultiply)) {
      claimed.push_back(mul);
      Product(mul->operand(0), factors, scale, last_constant);
      Product(mul->operand(1), factors, scale, last_constant);
      return;
    }
    if (const Operation* pow = Absorbable(v, OpKind::kPower)) {
      std::optional<double> e = ScalarConstant(pow->operand(1), fusion);
      if (e && (*e == 2 || *e == 3)) {
        claimed.push_back(pow);
        for (int i = 0; i < static_cast<int>(*e); ++i) Product(pow->operand(0), factors, scale, last_constant);
        return;
      }
    }
    if (std::optional<double> c = ScalarConstant(v, fusion)) {
      scale *= *c;
      last_constant = v;
      return;
    }
    factors.push_back(v);
  }

  // Terms of a sum tree rooted at `v`, constants folded into `offset`.
  void Sum(const Value* v, std::vector<const Value*>& terms, double& offset) {
    if (const Operation* add = Absorbable(v, OpKind::kAdd)) {
      claimed.push_back(add);
      Sum(add->operand(0), terms, offset);
      Sum(add->operand(1), terms, offset);
      return;
    }
    if (std::optional<double> c = ScalarConstant(v, fusion)) {
      offset += *c;
      return;
    }
    terms.push_back(v);
  }

  // v == scale * product(factors) with scale ~ `expected` and factors matching `x_count` x's
  // plus (when `other` is set) exactly one other factor, returned through *other.
  bool ScaledProduct(const Value* v, double expected, int x_count, const Value** other) {
    std::vector<const Value*> factors;
    double scale = 1;
    const Value* constant = nullptr;
    Product(v, factors, scale, constant);
    if (constant == nullptr ? expected != 1 : !Near(scale, expected, constant)) return false;
    int xs = 0;
    const Value* rest = nullptr;
    for (const Value* f : factors) {
      if (f == x) {
        ++xs;
      } else if (rest == nullptr && other != nullptr) {
        rest = f;
      } else {
        return false;
      }
    }
    if (xs != x_count || (other != nullptr && rest == nullptr)) return false;
    if (other != nullptr) *other = rest;
    return true;
  }

  // 1 + tanh(sqrt(2/pi) * inner(x)) in either inner form.
  bool GeluTanhBracket(const Value* v) {
    std::vector<const Value*> terms;
    double offset = 0;
    Sum(v, terms, offset);
    if (terms.size() != 1 || offset != 1) return false;
    const Operation* tanh = Absorbable(terms[0], OpKind::kTanh);
    if (tanh == nullptr) return false;
    claimed.push_back(tanh);
    const double kSqrt2OverPi = 0.7978845608028654;
    const Value* inner = nullptr;
    // sqrt(2/pi) * (x + 0.044715 x^3)
    const size_t mark = claimed.size();
    if (ScaledProduct(tanh->operand(0), kSqrt2OverPi, 0, &inner)) {
      std::vector<const Value*> inner_terms;
      double inner_offset = 0;
      Sum(inner, inner_terms, inner_offset);
      if (inner_offset == 0 && inner_terms.size() == 2) {
        for (int i = 0; i < 2; ++i) {
          if (inner_terms[i] == x && ScaledProduct(inner_terms[1 - i], 0.044715, 3, nullptr)) return true;
        }
      }
    }
    claimed.resize(mark);
    // sqrt(2/pi) * x * (1 + 0.044715 x^2)
    if (ScaledProduct(tanh->operand(0), kSqrt2OverPi, 1, &inner)) {
      std::vector<const Value*> inner_terms;
      double inner_offset = 0;
      Sum(inner, inner_terms, inner_offset);
      return inner_offset == 1 && inner_terms.size() == 1 &&
             ScaledProduct(inner_terms[0], 0.044715, 2, nullptr);
    }
    return false;
  }

  std::optional<ActivationKind> MatchAt(const Operation* root) {
    claimed.clear();
    const Value* rest = nullptr;
    if (ScaledProduct(root->result(0), 0.5, 1, &rest) && GeluTanhBracket(rest)) {
      return ActivationKind::kGeluTanh;
    }
    claimed.clear();
    if (ScaledProduct(root->result(0), 1, 1, &rest)) {
      const Operation* logistic = Absorbable(rest, OpKind::kLogistic);
      if (logistic != nullptr && logistic->operand(0) == x) {
        claimed.push_back(logistic);
        return ActivationKind::kSwish;
      }
      if (ExpandedSigmoid(rest)) return ActivationKind::kSwish;
    }
    return std::nullopt;
  }

  // 1 / (1 + exp(-x)): jax.nn.sigmoid as JAX exports it inside silu (divide by a sum holding
  // the constant 1 and exponential(negate(x))).
  bool ExpandedSigmoid(const Value* v) {
    const Operation* divide = Absorbable(v, OpKind::kDivide);
    if (divide == nullptr) return false;
    const std::optional<double> one = ScalarConstant(divide->operand(0), fusion);
    if (!one || *one != 1) return false;
    const size_t mark = claimed.size();
    claimed.push_back(divide);
    std::vector<const Value*> terms;
    double offset = 0;
    Sum(divide->operand(1), terms, offset);
    const Operation* exp = terms.size() == 1 && offset == 1 ? Absorbable(terms[0], OpKind::kExponential)
                                                            : nullptr;
    const Operation* negate = exp != nullptr ? Absorbable(exp->operand(0), OpKind::kNegate) : nullptr;
    if (negate == nullptr || negate->operand(0) != x) {
      claimed.resize(mark);
      return false;
    }
    claimed.push_back(exp);
    claimed.push_back(negate);
    return true;
  }

  // Every use of x and of each claimed op other than `root` is by a claimed op.
  bool Closed(const Operation* root) const {
    auto claimed_op = [&](const Operation* op) {
      return std::find(claimed.begin(), claimed.end(), op) != claimed.end();
    };
    for (const Use& use : x->uses()) {
      if (!claimed_op(use.user)) return false;
    }
    for (const Operation* op : claimed) {
      if (op == root) continue;
      for (const Use& use : op->result(0)->uses()) {
        if (!claimed_op(use.user)) return false;
      }
    }
    return true;
  }
};

}  // namespace

std::optional<double> ScalarConstant(const Value* value, const FusionPlan* fusion) {
  const Operation* def = value->defining_op();
  if (def != nullptr && def->kind() == OpKind::kBroadcastInDim && fusion != nullptr &&
      fusion->IsElided(def)) {
    value = def->operand(0);
    def = value->defining_op();
  }
  if (def == nullptr || def->kind() != OpKind::kConstant || value->type().element_count() != 1) {
    return std::nullopt;
  }
  const DenseElements* dense = def->GetDense("value");
  if (dense == nullptr || !IsFloat(dense->type.element_type())) return std::nullopt;
  auto tensor = Tensor::FromBytes(dense->type, dense->bytes);
  if (!tensor.ok()) return std::nullopt;
  return tensor->GetAsDouble(0);
}

std::optional<ActivationMatch> MatchActivation(const Value* x,
                                               std::span<const Operation* const> cluster_ops,
                                               const FusionPlan* fusion) {
  Matcher matcher{x, cluster_ops, fusion, {}};
  for (const Operation* root : cluster_ops) {
    if (root->num_results() != 1 || root->kind() != OpKind::kMultiply) continue;
    std::optional<ActivationKind> kind = matcher.MatchAt(root);
    if (!kind) continue;
    std::vector<const Operation*>& ops = matcher.claimed;
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    if (!matcher.Closed(root)) continue;
    return ActivationMatch{*kind, root, ops};
  }
  return std::nullopt;
}

}  // namespace accy::kernels
