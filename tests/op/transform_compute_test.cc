// Compute definitions of the layout ops (reshape, squeeze, expand_dims, transpose,
// strided_slice, take, concatenate): each case is lowered, compiled and run, and compared
// with the interpreter's reference kernels.
#include <gtest/gtest.h>

#include "op/compute_test_util.h"

namespace kiln {
namespace {

using testing::CompareOptions;
using testing::expect_compiled_matches_interpreter;

std::string unary_fn(const std::string& call, const std::string& shape, const std::string& dtype = "float32") {
  return "fn (%x: Tensor[(" + shape + "), " + dtype + "], Primitive=1) { " + call + " }";
}

CompareOptions wide_ints() { return testing::inputs_in(-1000, 1000); }

TEST(TransformCompute, ReshapeSqueezeExpandDims) {
  for (const char* dtype : {"float32", "int64", "uint8", "bool"}) {
    SCOPED_TRACE(dtype);
    expect_compiled_matches_interpreter(unary_fn("reshape(%x, newshape=[4, -1])", "2, 3, 4", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("reshape(%x, newshape=[0, 12])", "2, 3, 4", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("squeeze(%x, axis=[1, 3])", "3, 1, 5, 1", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("squeeze(%x)", "1, 5, 1", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("expand_dims(%x, axis=-1, num_newaxis=2)", "3, 5", dtype),
                                        wide_ints());
  }
}

TEST(TransformCompute, Transpose) {
  expect_compiled_matches_interpreter(unary_fn("transpose(%x, axes=[1, 0])", "33, 17"));
  expect_compiled_matches_interpreter(unary_fn("transpose(%x, axes=[0, 2, 1, 3])", "2, 3, 4, 5", "int32"), wide_ints());
  expect_compiled_matches_interpreter(unary_fn("transpose(%x)", "2, 3, 4", "float64"));
  expect_compiled_matches_interpreter(unary_fn("transpose(%x, axes=[-1, 0, -2])", "2, 3, 4"));
}

TEST(TransformCompute, StridedSlice) {
  expect_compiled_matches_interpreter(unary_fn("strided_slice(%x, begin=[1, 0], end=[4, 7], strides=[2, 3])", "6, 9"));
  expect_compiled_matches_interpreter(
      unary_fn("strided_slice(%x, begin=[-1], end=[-10], strides=[-2], axes=[1])", "3, 9", "int64"), wide_ints());
  expect_compiled_matches_interpreter(
      unary_fn("strided_slice(%x, begin=[0, 2], end=[100, 1000], axes=[0, 2])", "4, 3, 6", "float64"));
  expect_compiled_matches_interpreter(
      unary_fn("strided_slice(%x, begin=[1, 1], end=[2, -1], slice_mode=\"size\")", "4, 5"));
}

TEST(TransformCompute, TakeClipsAndWraps) {
  for (const char* mode : {"clip", "wrap"})
    for (const char* axis : {"0", "1", "-1"}) {
      SCOPED_TRACE(std::string(mode) + " axis " + axis);
      expect_compiled_matches_interpreter(
          "fn (%x: Tensor[(5, 7), float32], %i: Tensor[(3, 2), int64], Primitive=1) "
          "{ take(%x, %i, axis=" +
              std::string(axis) + ", mode=\"" + mode + "\") }",
          testing::inputs_in(-12, 12));
    }
  // axis None indexes the flattened data.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(3, 4), int32], %i: Tensor[(6), int32], Primitive=1) { take(%x, %i, mode=\"wrap\") }",
      testing::inputs_in(-20, 20));
}

TEST(TransformCompute, TakeFastStaysOnTheReferenceKernel) {
  Expr parsed = parse_expr(
      "fn (%x: Tensor[(5), float32], %i: Tensor[(2), int64], Primitive=1) { take(%x, %i, axis=0, mode=\"fast\") }");
  infer_expr_type(parsed);
  EXPECT_NE(backend::compile_obstacle(*as_function(parsed)).find("fast"), std::string::npos);
}

TEST(TransformCompute, Concatenate) {
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(2, 3), float32], %b: Tensor[(2, 5), float32], %c: Tensor[(2, 1), float32], Primitive=1) "
      "{ %0 = (%a, %b, %c); concatenate(%0, axis=1) }");
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(2, 3), int64], %b: Tensor[(4, 3), int64], Primitive=1) "
      "{ %0 = (%a, %b); concatenate(%0, axis=-2) }",
      wide_ints());
}

// DenseNet's pre-activation: a concatenation of many blocked inputs, then per-channel scale, shift
// and relu. The concatenation is computed inside the output's rows (no scratch copy of it first),
// and each row's choice of input is hoisted out of its vectorised loop (no select left per element).
TEST(TransformCompute, ConcatenationOfManyInputsFusedIntoItsTail) {
  std::string params, fields;
  for (int k = 0; k < 10; ++k) {
    params += "%x" + std::to_string(k) + ": Tensor[(1, " + std::to_string(1 + k % 2) + ", 5, 7, 16), float32], ";
    fields += (k ? ", %x" : "%x") + std::to_string(k);
  }
  const std::string source = expect_compiled_matches_interpreter(
      "fn (" + params + "%s: Tensor[(1, 15, 1, 1, 16), float32], %b: Tensor[(1, 15, 1, 1, 16), float32], " +
      "Primitive=1) { %0 = (" + fields + "); %1 = concatenate(%0, axis=1); %2 = multiply(%1, %s); " +
      "%3 = add(%2, %b); nn.relu(%3) }");
  EXPECT_EQ(source.find("workspace_alloc"), std::string::npos) << source;
  size_t loops = 0;
  for (size_t at = source.find("  KILN_VECTORIZE\n"); at != std::string::npos;
       at = source.find("  KILN_VECTORIZE\n", at + 1))
    ++loops;
  EXPECT_EQ(loops, 10u) << source;  // one vectorised loop per input
}

TEST(TransformCompute, PadEveryMode) {
  for (const char* mode : {"constant", "edge", "reflect"})
    for (const char* dtype : {"float32", "int32"}) {
      SCOPED_TRACE(std::string(mode) + " " + dtype);
      expect_compiled_matches_interpreter(
          std::string("fn (%x: Tensor[(2, 3, 4), ") + dtype + "], %v: Tensor[(), " + dtype +
              "], Primitive=1) { nn.pad(%x, %v, pad_width=[[0, 1], [2, 5], [-1, 3]], pad_mode=\"" + mode + "\") }",
          wide_ints());
    }
  // A single-element axis reflects onto itself.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(1, 4), float32], %v: Tensor[(), float32], Primitive=1) "
      "{ nn.pad(%x, %v, pad_width=[[2, 2], [1, 1]], pad_mode=\"reflect\") }");
}

TEST(TransformCompute, SplitIntoSectionsAndAtIndices) {
  expect_compiled_matches_interpreter(unary_fn("split(%x, indices_or_sections=3, axis=1)", "2, 9, 4"));
  expect_compiled_matches_interpreter(
      unary_fn("%0 = split(%x, indices_or_sections=[2, 3], axis=-1); %1 = %0.2; %2 = %0.0; (%1, %2)", "3, 7", "int64"),
      wide_ints());
}

TEST(TransformCompute, FusedWithElementwise) {
  // The transformer's attention head split: reshape, transpose, then scale.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(16, 64), float32], Primitive=1) { %0 = reshape(%x, newshape=[16, 4, 16]); "
      "%1 = transpose(%0, axes=[1, 0, 2]); %2 = exp(%1); add(%2, %2) }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(4, 8), float32], %y: Tensor[(4, 8), float32], Primitive=1) { %0 = exp(%x); "
      "%1 = (%0, %y); %2 = concatenate(%1, axis=0); strided_slice(%2, begin=[1], end=[7], axes=[0]) }");
}

TEST(TransformCompute, ScalarsAndNegativeAxes) {
  for (const char* dtype : {"int32", "float64", "bool"}) {
    SCOPED_TRACE(dtype);
    expect_compiled_matches_interpreter(unary_fn("reshape(%x, newshape=[])", "1, 1", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("expand_dims(%x, axis=0)", "", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("squeeze(%x, axis=[-1, 0])", "1, 4, 1", dtype), wide_ints());
    expect_compiled_matches_interpreter(unary_fn("transpose(%x, axes=[2, -3, 1])", "3, 1, 4", dtype), wide_ints());
  }
}

TEST(TransformCompute, StridedSliceEveryForm) {
  for (const char* dtype : {"int32", "float64", "bool"}) {
    SCOPED_TRACE(dtype);
    // Reversed on every axis, with begins and ends far outside that clamp.
    expect_compiled_matches_interpreter(
        unary_fn("strided_slice(%x, begin=[-1, 100], end=[-1000, -1000], strides=[-1, -2])", "4, 7", dtype),
        wide_ints());
    // Axes out of order, a negative axis, the unmentioned middle axis read whole.
    expect_compiled_matches_interpreter(
        unary_fn("strided_slice(%x, begin=[-2, 1], end=[0, 4], strides=[-1, 2], axes=[-1, 0])", "5, 2, 6", dtype),
        wide_ints());
  }
  // Size mode: -1 reads to the end.
  expect_compiled_matches_interpreter(
      unary_fn("strided_slice(%x, begin=[1, 2], end=[-1, 2], axes=[0, 2], slice_mode=\"size\")", "4, 3, 6"));
}

TEST(TransformCompute, TakeIndexShapesAndDtypes) {
  // A scalar index drops the axis.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(5, 3), float32], %i: Tensor[(), int64], Primitive=1) { take(%x, %i, axis=0) }",
      testing::inputs_in(-7, 7));
  for (const char* dtype : {"int64", "float64", "bool"}) {
    SCOPED_TRACE(dtype);
    // Indices far out of range in both directions, clamped or wrapped.
    for (const char* mode : {"clip", "wrap"})
      expect_compiled_matches_interpreter(std::string("fn (%x: Tensor[(2, 7, 3), ") + dtype +
                                              "], %i: Tensor[(2, 4), int32], Primitive=1) { take(%x, %i, axis=-2, "
                                              "mode=\"" +
                                              mode + "\") }",
                                          wide_ints());
  }
}

TEST(TransformCompute, ConcatenateDtypesAndRepeats) {
  for (const char* dtype : {"int32", "float64", "bool"}) {
    SCOPED_TRACE(dtype);
    const std::string t = dtype;
    expect_compiled_matches_interpreter("fn (%a: Tensor[(1, 2, 3), " + t + "], %b: Tensor[(3, 2, 3), " + t +
                                            "], Primitive=1) { %0 = (%a, %b, %a); concatenate(%0, axis=0) }",
                                        wide_ints());
  }
  expect_compiled_matches_interpreter(
      "fn (%a: Tensor[(2, 3), float32], Primitive=1) { %0 = (%a,); concatenate(%0, axis=-1) }");
}

TEST(TransformCompute, PadDtypesAndWidePads) {
  for (const char* dtype : {"float64", "int64", "bool"}) {
    SCOPED_TRACE(dtype);
    expect_compiled_matches_interpreter(std::string("fn (%x: Tensor[(3, 2), ") + dtype + "], %v: Tensor[(), " + dtype +
                                            "], Primitive=1) { nn.pad(%x, %v, pad_width=[[1, 0], [0, 3]]) }",
                                        wide_ints());
  }
  // Pads longer than the axis reflect back and forth; edge mode with a crop on the other side.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(3, 4), float32], %v: Tensor[(), float32], Primitive=1) "
      "{ nn.pad(%x, %v, pad_width=[[7, 9], [0, 5]], pad_mode=\"reflect\") }");
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(5), int32], %v: Tensor[(), int32], Primitive=1) "
      "{ nn.pad(%x, %v, pad_width=[[-2, 4]], pad_mode=\"edge\") }",
      wide_ints());
}

TEST(TransformCompute, WhereDtypes) {
  for (const char* dtype : {"int32", "float64", "bool"}) {
    SCOPED_TRACE(dtype);
    const std::string t = dtype;
    expect_compiled_matches_interpreter("fn (%c: Tensor[(), bool], %x: Tensor[(2, 3), " + t + "], %y: Tensor[(3), " +
                                            t + "], Primitive=1) { where(%c, %x, %y) }",
                                        wide_ints());
  }
}

TEST(TransformCompute, MoreFusions) {
  // Gather rows of a computed tensor, then an elementwise op on the gathered rows.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(6, 4), float32], %i: Tensor[(3), int64], Primitive=1) "
      "{ %0 = exp(%x); %1 = take(%0, %i, axis=0, mode=\"wrap\"); add(%1, %1) }",
      testing::inputs_in(-9, 9));
  // Padding a computed tensor, then a condition on the padded one.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(3, 4), float32], %v: Tensor[(), float32], %c: Tensor[(5, 6), bool], Primitive=1) "
      "{ %0 = add(%x, %x); %1 = nn.pad(%0, %v, pad_width=[[1, 1], [2, 0]]); %2 = exp(%1); where(%c, %2, %1) }");
  // Slices of a reshape feeding a concatenate.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(24), int64], Primitive=1) { %0 = reshape(%x, newshape=[4, 6]); "
      "%1 = strided_slice(%0, begin=[0], end=[2], axes=[0]); %2 = strided_slice(%0, begin=[-1], end=[-5], "
      "strides=[-1], axes=[0]); %3 = (%2, %1); %4 = concatenate(%3, axis=0); add(%4, %4) }",
      wide_ints());
}

// Shapes the injective schedule runs as rows of the innermost axis (joined with the axes before
// it while a row is shorter than 8), with the row count not a multiple of the rows per task.
TEST(TransformCompute, RowSchedulesOnOddShapes) {
  // ShuffleNet's channel shuffle: small (serial rows) and large enough for parallel tasks.
  for (const char* dims : {"1, 29, 7, 13", "1, 58, 28, 29"}) {
    SCOPED_TRACE(dims);
    const std::string d(dims);
    const std::string c = d.substr(3, 2), hw = d.substr(7);
    expect_compiled_matches_interpreter(
        "fn (%a: Tensor[(" + d + "), float32], %b: Tensor[(" + d +
        "), float32], Primitive=1) "
        "{ %0 = (%a, %b); %1 = concatenate(%0, axis=1); %2 = reshape(%1, newshape=[1, 2, " +
        c + ", " + hw + "]); %3 = transpose(%2, axes=[0, 2, 1, 3, 4]); reshape(%3, newshape=[1, -1, " + hw + "]) }");
  }
  expect_compiled_matches_interpreter(unary_fn("strided_slice(%x, begin=[57], end=[116], axes=[1])", "1, 116, 19, 17"));
  // Rows of 3 joined with H (21 per row), a broadcast operand along C.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(2, 5, 7, 3), float32], %y: Tensor[(5, 1, 1), float32], Primitive=1) { add(%x, %y) }");
  // Trailing axes of one: rows join C.
  expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(3, 37, 1, 1), float32], %y: Tensor[(37, 1, 1), float32], Primitive=1) "
      "{ multiply(%x, %y) }");
}

}  // namespace
}  // namespace kiln
