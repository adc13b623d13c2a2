// Random graphs for the passes' property tests: elementwise ops, conv2d or dense on constant
// weights, per-channel scales, calls rebuilt as fresh equal nodes, constants duplicated,
// unused lets, tuples projected in place and ifs on constants.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kiln/interp/interpreter.h"
#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"

namespace kiln::testing {

inline NDArray random_array(const Shape& shape, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  NDArray a = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

// A random graph over one image (1, 4, 5, 5) or one matrix (3, 8): elementwise ops, conv2d
// or dense on constant weights, with calls rebuilt as fresh equal nodes, constants
// duplicated, unused lets, tuples projected in place and ifs on constants.
class GraphGenerator {
 public:
  // `channel_ops` adds per-channel scales and several convs or denses reading one input
  // (what FoldScaleAxis and the CombineParallel passes rewrite).
  explicit GraphGenerator(unsigned seed, bool channel_ops = false) : gen_(seed), channel_ops_(channel_ops) {}

  IRModule make(bool image, std::vector<Value>* args) {
    shape_ = image ? Shape{1, 4, 5, 5} : Shape{3, 8};
    Var x = make_var("x", tensor_type(shape_, DType::kFloat32));
    Var y = make_var("y", tensor_type(shape_, DType::kFloat32));
    args->assign({Value(random_array(shape_, gen_)), Value(random_array(shape_, gen_))});
    pool_ = {x, y};
    std::vector<std::pair<Var, Expr>> lets;
    int steps = 6 + pick(10);
    for (int i = 0; i < steps; ++i) {
      Expr e = step(image);
      if (pick(4) == 0) {  // through a let, used or not
        Var v = make_var("v" + std::to_string(i));
        lets.emplace_back(v, e);
        if (pick(2))
          e = v;
        else
          continue;
      }
      pool_.push_back(e);
    }
    Expr body = make_tuple({pool_.back(), pool_[pool_.size() / 2 + 1]});
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = make_let(it->first, it->second, body);
    IRModule mod;
    mod.add("main", make_function({x, y}, body));
    return mod;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen_); }
  const Expr& any() { return pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]; }

  Expr constant_like(int64_t channels) {
    // Few distinct values, so that equal constants occur.
    NDArray c = NDArray::empty({channels}, DType::kFloat32);
    float v = static_cast<float>(pick(3)) * 0.5f - 0.5f;
    for (int64_t i = 0; i < channels; ++i) c.set(i, v);
    return make_constant(c);
  }

  Expr step(bool image) {
    static const char* const kUnary[] = {"nn.relu", "tanh", "sigmoid", "negative"};
    static const char* const kBinary[] = {"add", "multiply", "subtract", "maximum"};
    switch (pick(channel_ops_ ? 10 : 7)) {
      // Draws are sequenced by hand: the order a compiler evaluates function arguments in is
      // unspecified (GCC and clang differ), and the graphs must not depend on it.
      case 0: {
        Expr a = any();
        return call_op(kUnary[pick(4)], {a});
      }
      case 1: {
        Expr a = any(), b = any();
        return call_op(kBinary[pick(4)], {a, b});
      }
      case 2: {  // a fresh copy of an earlier call
        for (int tries = 0; tries < 4; ++tries) {
          const auto* call = as<CallNode>(any());
          if (call) return make_call(call->callee, call->args, call->attrs);
        }
        return call_op("nn.relu", {any()});
      }
      case 3: {
        Expr a = any(), c = constant_like(shape_.back());
        return call_op(kBinary[pick(2)], {a, c});
      }
      case 4: {
        Expr a = any(), b = any();
        int i = pick(2);
        return make_tuple_get_item(make_tuple({a, b}), i);
      }
      case 5: {
        NDArray c = NDArray::empty({}, DType::kBool);
        *c.data<bool>() = pick(2) != 0;
        Expr otherwise = call_op("tanh", {any()});
        Expr then = any();
        return make_if(make_constant(c), then, otherwise);
      }
      case 7: {  // a per-channel scale: (C, 1, 1) on an image, (N) on a matrix
        NDArray c = NDArray::empty(image ? Shape{shape_[1], 1, 1} : Shape{shape_.back()}, DType::kFloat32);
        for (int64_t i = 0; i < c.numel(); ++i) c.set(i, 0.5 + 0.25 * static_cast<double>(pick(4)));
        // Half the time on a conv2d or dense of its own, which FoldScaleAxis can fold it into.
        return call_op("multiply", {pick(2) ? weighted(any(), image) : weighted_or_any(), make_constant(c)});
      }
      case 9: return no_op_chain(any());
      case 8: {  // a second weight on the input of an earlier conv or dense: parallel branches
        for (int tries = 0; tries < 4; ++tries) {
          const auto* call = as<CallNode>(any());
          if (!call || !call->op() || (call->op()->name != "nn.conv2d" && call->op()->name != "nn.dense")) continue;
          const auto* w = as<ConstantNode>(call->args[1]);
          if (!w) continue;
          NDArray w2 = NDArray::empty(w->data.shape(), DType::kFloat32);
          for (int64_t i = 0; i < w2.numel(); ++i) w2.set(i, (i % 3) * 0.25 - 0.25);
          return make_call(call->callee, {call->args[0], make_constant(w2)}, call->attrs);
        }
        return call_op("tanh", {any()});
      }
      default: return weighted(any(), image);
    }
  }

  // conv2d (3x3, same padding) on an image, dense on a matrix, with a constant weight.
  static Expr weighted(const Expr& in, bool image) {
    if (image) {
      NDArray w = NDArray::empty({4, 4, 3, 3}, DType::kFloat32);
      for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i % 5) * 0.125 - 0.25);
      return call_op("nn.conv2d", {in, make_constant(w)}, Attrs{{"padding", AttrValue(std::vector<int64_t>{1, 1})}});
    }
    NDArray w = NDArray::empty({8, 8}, DType::kFloat32);
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i % 7) * 0.125 - 0.375);
    return call_op("nn.dense", {in, make_constant(w)});
  }

  // The output of a conv2d or dense if one is picked in a few tries, else anything.
  Expr weighted_or_any() {
    for (int tries = 0; tries < 4; ++tries) {
      const Expr& e = any();
      const auto* call = as<CallNode>(e);
      if (call && call->op() && (call->op()->name == "nn.conv2d" || call->op()->name == "nn.dense")) return e;
    }
    return any();
  }

  // What SimplifyExpr removes: a transpose undone, a reshape chain, a multiply by one, an add of zero.
  Expr no_op_chain(const Expr& e) {
    switch (pick(4)) {
      case 0: {
        std::vector<int64_t> perm(shape_.size());
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
        Attrs attrs{{"axes", AttrValue(perm)}};
        return call_op("transpose", {call_op("transpose", {e}, attrs)}, attrs);
      }
      case 1: {
        Expr flat = call_op("reshape", {e}, Attrs{{"newshape", AttrValue(std::vector<int64_t>{-1})}});
        return call_op("reshape", {flat}, Attrs{{"newshape", AttrValue(std::vector<int64_t>(shape_))}});
      }
      case 2: return call_op("multiply", {e, make_constant(NDArray::scalar(DType::kFloat32, 1.0))});
      default: return call_op("add", {e, make_constant(NDArray::scalar(DType::kFloat32, 0.0))});
    }
  }

  std::mt19937 gen_;
  bool channel_ops_;
  Shape shape_;
  std::vector<Expr> pool_;
};

}  // namespace kiln::testing
