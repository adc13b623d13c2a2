#include "kiln/tir/tile_epilogue.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

// A tile call as a convolution's: (positions, blocks, tile pointer) accumulating 2 blocks x 7
// positions x 16 lanes, blocks 112 floats apart; its variant takes the epilogue's operands.
std::vector<TileEpilogueCall> tile_calls() {
  TileEpilogueCall call;
  call.call = "tile_f32";
  call.tile = [](const std::vector<PrimExpr>& args) -> std::optional<TileShape> {
    return TileShape{2, args[1]->int_value, args[0]->int_value, 16, 112};
  };
  call.with_epilogue = [](const std::vector<PrimExpr>& args, const RegisterEpilogue& e) {
    // A hard swish passes its slope and offset where a clamp passes its bounds.
    const double p0 = e.hard_swish ? e.hard_swish->slope : e.lo, p1 = e.hard_swish ? e.hard_swish->offset : e.hi;
    return extern_call("tile_ep_f32", {args[0], args[1], e.out, e.out_block_stride, e.bias,
                                       e.residual.defined() ? e.residual : PrimExpr(0), make_const(DType::kFloat32, p0),
                                       make_const(DType::kFloat32, p1)});
  };
  call.takes_residual = true;
  return {call};
}

struct TileFixture {
  Buffer tile = make_buffer("T", DType::kFloat32, {2, 7, 16});
  Buffer out = make_buffer("OUT", DType::kFloat32, {1, 4, 7, 14, 16});
  Buffer bias = make_buffer("B", DType::kFloat32, {4, 16});
  Buffer residual = make_buffer("R", DType::kFloat32, {1, 4, 7, 14, 16});
  Var g{"g"}, x{"x"}, j{"j"}, l{"l"}, m{"m"};

  // for g (block pair), x (row): T = 0; tile_f32(7, 2, &T); OUT[...] = tail(T[...], j, l, m).
  Stmt function(const std::function<PrimExpr(const PrimExpr& acc)>& tail, const std::string& call = "tile_f32",
                const PrimExpr& operand = PrimExpr(0)) {
    Var zj("zj"), zl("zl"), zm("zm");
    Stmt init = for_loop(zj, 0, 2, ForKind::kSerial,
                         for_loop(zl, 0, 7, ForKind::kSerial,
                                  for_loop(zm, 0, 16, ForKind::kSerial, store(tile, {zj, zl, zm}, float_imm(0)))));
    Stmt accumulate = Evaluate{extern_call(call, {PrimExpr(7), PrimExpr(2), address_of(tile, {0, 0, 0}), operand})};
    Stmt epilogue = for_loop(j, 0, 2, ForKind::kSerial,
                             for_loop(l, 0, 7, ForKind::kSerial,
                                      for_loop(m, 0, 16, ForKind::kVectorized,
                                               store(out, {0, g * 2 + j, x, l, m}, tail(load(tile, {j, l, m}))))));
    return for_loop(g, 0, 2, ForKind::kParallel,
                    for_loop(x, 0, 7, ForKind::kSerial, Allocate{tile, seq({init, accumulate, epilogue})}));
  }
  PrimExpr bias_of_block() { return load(bias, {g * 2 + j, m}); }
};

PrimExpr relu(const PrimExpr& v) { return select(lt(v, float_imm(0)), float_imm(0), v); }
PrimExpr clip6(const PrimExpr& v) {
  const PrimExpr r = relu(v);
  return select(gt(r, float_imm(6)), float_imm(6), r);
}

// clip(tile + bias, 0, 6), as MobileNet's expansions end: the zero fill, the call and the tail
// become one call of the variant that starts at the bias and stores through the clamp.
TEST(TirTileEpilogue, FoldsBiasAndClampIntoTheCall) {
  TileFixture f;
  const Stmt s = f.function([&](const PrimExpr& acc) { return clip6(acc + f.bias_of_block()); });
  EXPECT_EQ(to_string(fold_tile_epilogues(s, tile_calls())),
            "for g in parallel(2):\n"
            "  for x in range(7):\n"
            "    call_extern(\"tile_ep_f32\", 7, 2, address_of(OUT[0, g * 2, x, 0, 0]), 1568, address_of(B[g * 2, "
            "0]), 0, 0.0f, 6.0f)\n");
}

// A residual block's end, relu(residual + (tile + bias)): the residual, read where the output is
// written, starts the accumulators too.
TEST(TirTileEpilogue, FoldsAResidualThatStepsAsTheOutput) {
  TileFixture f;
  const Stmt s = f.function([&](const PrimExpr& acc) {
    return relu(load(f.residual, {0, f.g * 2 + f.j, f.x, f.l, f.m}) + (acc + f.bias_of_block()));
  });
  EXPECT_EQ(to_string(fold_tile_epilogues(s, tile_calls())),
            "for g in parallel(2):\n"
            "  for x in range(7):\n"
            "    call_extern(\"tile_ep_f32\", 7, 2, address_of(OUT[0, g * 2, x, 0, 0]), 1568, address_of(B[g * 2, "
            "0]), address_of(R[0, g * 2, x, 0, 0]), 0.0f, inf)\n");
}

// MobileNetV3's hard swish, v * clamp(v * slope + offset, 0, 1), with v = tile + bias.
TEST(TirTileEpilogue, FoldsHardSwish) {
  TileFixture f;
  for (bool gate_first : {false, true}) {
    const Stmt s = f.function([&](const PrimExpr& acc) {
      const PrimExpr v = acc + f.bias_of_block();
      PrimExpr gate = v * float_imm(1.0 / 6) + float_imm(0.5);
      gate = select(lt(gate, float_imm(0)), float_imm(0), gate);
      gate = select(gt(gate, float_imm(1)), float_imm(1), gate);
      return gate_first ? gate * v : v * gate;
    });
    EXPECT_EQ(to_string(fold_tile_epilogues(s, tile_calls())),
              "for g in parallel(2):\n"
              "  for x in range(7):\n"
              "    call_extern(\"tile_ep_f32\", 7, 2, address_of(OUT[0, g * 2, x, 0, 0]), 1568, address_of(B[g * 2, "
              "0]), 0, 0.16666667f, 0.5f)\n");
  }
}

// Tails the variant does not compute stay as they are: a scale, a bias that changes with the
// position, the tile read transposed, max(0, v) (0 for NaN, where the kernel keeps NaN), swish
// (tile_epilogue.h says why), a residual read at other positions than written, a call without a
// variant, and a call that reads the output the variant would write.
TEST(TirTileEpilogue, LeavesOtherTailsAlone) {
  TileFixture f;
  const std::vector<std::function<PrimExpr(const PrimExpr&)>> tails = {
      [&](const PrimExpr& acc) { return acc * f.bias_of_block(); },
      [&](const PrimExpr& acc) {
        return acc + load(f.bias, {f.l, f.m});
      },
      [&](const PrimExpr&) {
        return load(f.tile, {1 - f.j, f.l, f.m}) + f.bias_of_block();
      },
      [&](const PrimExpr& acc) { return max(float_imm(0), acc + f.bias_of_block()); },
      [&](const PrimExpr& acc) {  // a gate clamped to [0, 2]
        const PrimExpr v = acc + f.bias_of_block();
        return v * select(gt(v * float_imm(0.5) + float_imm(0.5), float_imm(2)), float_imm(2),
                          v * float_imm(0.5) + float_imm(0.5));
      },
      [&](const PrimExpr& acc) { return (acc + f.bias_of_block()) * call("sigmoid", {acc + f.bias_of_block()}); },
      [&](const PrimExpr& acc) {
        return acc + f.bias_of_block() + load(f.residual, {0, f.g * 2 + f.j, f.l, f.x, f.m});
      },
  };
  for (const auto& tail : tails) {
    const Stmt s = f.function(tail);
    EXPECT_EQ(to_string(fold_tile_epilogues(s, tile_calls())), to_string(s));
  }
  const Stmt other_call = f.function([&](const PrimExpr& acc) { return acc + f.bias_of_block(); }, "other_f32");
  EXPECT_EQ(to_string(fold_tile_epilogues(other_call, tile_calls())), to_string(other_call));
  const Stmt reads_output = f.function([&](const PrimExpr& acc) { return acc + f.bias_of_block(); }, "tile_f32",
                                       address_of(f.out, {0, 0, 0, 0, 0}));
  EXPECT_EQ(to_string(fold_tile_epilogues(reads_output, tile_calls())), to_string(reads_output));
}

}  // namespace
}  // namespace kiln::tir
