// Typed attributes of the tensor and transform op families (kiln/attrs/tensor.h,
// kiln/attrs/transform.h): round trips, defaults, validation errors, and schemas that read
// exactly as the hand-written ones did.
#include "kiln/attrs/tensor.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/expr.h"
#include "kiln/runtime/kernel_registry.h"
#include "op/attrs_test_util.h"
#include "op_test_util.h"
#include "test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(TensorTransformAttrs, RoundTrip) {
  TransposeAttrs t{.axes = Ints{1, 0, 2}};
  EXPECT_EQ(attrs_to(t).to_string(), "axes=[1, 0, 2]");
  EXPECT_EQ(attrs_from<TransposeAttrs>(attrs_to(t), "transpose").axes, t.axes);
  EXPECT_EQ(attrs_to(TransposeAttrs{}).to_string(), "axes=None");

  SplitAttrs by_indices{.indices_or_sections = AttrValue(Ints{2, 5}), .axis = 1};
  SplitAttrs back = attrs_from<SplitAttrs>(attrs_to(by_indices), "split");
  EXPECT_FALSE(back.is_sections());
  EXPECT_EQ(back.indices(), (Ints{2, 5}));
  EXPECT_EQ(back.axis, 1);
  EXPECT_EQ(attrs_from<SplitAttrs>({{"indices_or_sections", int64_t{3}}}, "split").sections(), 3);

  TfIdfVectorizerAttrs tf{.mode = "TFIDF",
                          .min_gram_length = 1,
                          .max_gram_length = 2,
                          .max_skip_count = 0,
                          .ngram_counts = {0, 2},
                          .ngram_indexes = {0, 1, 2},
                          .pool_int64s = {4, 5, 4, 5},
                          .weights = std::vector<double>{1.0, 2.0, 0.5}};
  Attrs generic = attrs_to(tf);
  EXPECT_EQ(attrs_to(attrs_from<TfIdfVectorizerAttrs>(generic, "tfidf_vectorizer")), generic);

  TopKAttrs k;
  k.k = 3;
  k.axis = 0;
  k.ret_type = "indices";
  k.is_ascend = true;
  k.dtype = "int32";
  EXPECT_EQ(attrs_to(k).to_string(), "k=3, axis=0, ret_type=\"indices\", is_ascend=True, dtype=\"int32\"");
  EXPECT_EQ(attrs_from<TopKAttrs>(attrs_to(k), "topk").indices_dtype(), DType::kInt32);
}

TEST(TensorTransformAttrs, Defaults) {
  TopKAttrs k = attrs_from<TopKAttrs>({}, "topk");
  EXPECT_EQ(k.k, 1);
  EXPECT_EQ(k.axis, -1);
  EXPECT_TRUE(k.returns_values() && k.returns_indices());
  EXPECT_FALSE(k.is_ascend);
  EXPECT_EQ(k.indices_dtype(), DType::kInt64);
  UniqueAttrs u = attrs_from<UniqueAttrs>({}, "unique");
  EXPECT_TRUE(u.sorted);
  EXPECT_FALSE(u.axis.has_value());
  CumsumAttrs c = attrs_from<CumsumAttrs>({{"axis", AttrValue()}}, "cumsum");
  EXPECT_FALSE(c.axis.has_value());
  EXPECT_FALSE(c.exclusive || c.reverse);
  EXPECT_EQ(attrs_from<ExpandDimsAttrs>({{"axis", int64_t{-1}}}, "expand_dims").num_newaxis, 1);
  EXPECT_EQ(attrs_from<OneHotAttrs>({{"depth", int64_t{4}}}, "one_hot").dtype, "float32");
  EXPECT_EQ(attrs_from<ConstantFillAttrs>({{"shape", Ints{2}}}, "zeros").result_dtype(), DType::kFloat32);
  // full's "" keeps fill_value's dtype.
  EXPECT_EQ(attrs_from<FullAttrs>({{"shape", Ints{2}}}, "full").result_dtype(DType::kInt8), DType::kInt8);
  ReverseSequenceAttrs r = attrs_from<ReverseSequenceAttrs>({}, "reverse_sequence");
  EXPECT_EQ(r.seq_axis, 1);
  EXPECT_EQ(r.batch_axis, 0);
}

TEST(TensorTransformAttrs, Errors) {
  std::string e = error_of([] { attrs_from<ReshapeAttrs>({{"newshape", Ints{2}}, {"allowzero", 2}}, "reshape"); });
  expect_names_op_and_attr(e, "reshape", "allowzero");
  e = error_of([] { attrs_from<ReshapeAttrs>({{"allowzero", 1}}, "reshape"); });
  expect_names_op_and_attr(e, "reshape", "newshape");
  EXPECT_NE(e.find("missing required attribute"), std::string::npos) << e;
  e = error_of([] { attrs_from<TopKAttrs>({{"ret_type", "all"}}, "topk"); });
  expect_names_op_and_attr(e, "topk", "ret_type");
  e = error_of([] { attrs_from<TopKAttrs>({{"dtype", "float32"}}, "topk"); });
  expect_names_op_and_attr(e, "topk", "dtype");
  e = error_of([] { attrs_from<OneHotAttrs>({{"depth", int64_t{-1}}}, "one_hot"); });
  expect_names_op_and_attr(e, "one_hot", "depth");
  e = error_of([] { attrs_from<OneHotAttrs>({{"depth", int64_t{2}}, {"dtype", "float"}}, "one_hot"); });
  expect_names_op_and_attr(e, "one_hot", "dtype");
  e = error_of([] { attrs_from<SplitAttrs>({{"indices_or_sections", "two"}}, "split"); });
  expect_names_op_and_attr(e, "split", "indices_or_sections");
  e = error_of([] { attrs_from<ExpandDimsAttrs>({{"axis", 0}, {"num_newaxis", -1}}, "expand_dims"); });
  expect_names_op_and_attr(e, "expand_dims", "num_newaxis");
  e = error_of([] { attrs_from<FullAttrs>({{"shape", Ints{2, -3}}}, "full"); });
  expect_names_op_and_attr(e, "full", "shape");
  e = error_of([] { attrs_from<CumsumAttrs>({{"axis", "last"}}, "cumsum"); });
  expect_names_op_and_attr(e, "cumsum", "axis");
  EXPECT_NE(e.find("wrong kind"), std::string::npos) << e;
  e = error_of([] { attrs_from<TransposeAttrs>({{"perm", Ints{1, 0}}}, "transpose"); });
  expect_names_op_and_attr(e, "transpose", "perm");
  EXPECT_NE(e.find("unknown attribute"), std::string::npos) << e;
}

TEST(TensorTransformAttrs, TfIdfVectorizerValidation) {
  TfIdfVectorizerAttrs good{.mode = "TF",
                            .min_gram_length = 1,
                            .max_gram_length = 1,
                            .max_skip_count = 0,
                            .ngram_counts = {0},
                            .ngram_indexes = {0, 1},
                            .pool_int64s = {3, 4}};
  auto error_with = [&](auto change, const std::string& attr) {
    TfIdfVectorizerAttrs bad = good;
    change(bad);
    expect_names_op_and_attr(error_of([&] { attrs_from<TfIdfVectorizerAttrs>(attrs_to(bad), "tfidf_vectorizer"); }),
                             "tfidf_vectorizer", attr);
  };
  EXPECT_NO_THROW(attrs_from<TfIdfVectorizerAttrs>(attrs_to(good), "tfidf_vectorizer"));
  error_with([](auto& a) { a.mode = "BM25"; }, "mode");
  error_with([](auto& a) { a.min_gram_length = 0; }, "min_gram_length");
  error_with([](auto& a) { a.max_gram_length = 0; }, "max_gram_length");
  error_with([](auto& a) { a.max_skip_count = -1; }, "max_skip_count");
  error_with([](auto& a) { a.ngram_indexes = {}; }, "ngram_indexes");
  error_with([](auto& a) { a.ngram_indexes = {0, -1}; }, "ngram_indexes");
  error_with([](auto& a) { a.ngram_counts = {0, 3}; }, "ngram_counts");
  error_with([](auto& a) { a.weights = std::vector<double>{1.0}; }, "weights");
}

// The declarations reproduce the schemas written by hand before: names, kinds, defaults and
// which attributes are required, so IR text and graph JSON read the same.
TEST(TensorTransformAttrs, SchemasUnchanged) {
  register_builtin_ops();
  struct Expected {
    const char* op;
    const char* name;
    AttrKind kind;
    AttrValue default_value;
    bool required;
  };
  const std::vector<Expected> expected{
      {"reshape", "newshape", AttrKind::kInts, AttrValue(), true},
      {"reshape", "allowzero", AttrKind::kInt, int64_t{0}, false},
      {"squeeze", "axis", AttrKind::kInts, AttrValue(), false},
      {"expand_dims", "axis", AttrKind::kInt, AttrValue(), true},
      {"expand_dims", "num_newaxis", AttrKind::kInt, int64_t{1}, false},
      {"transpose", "axes", AttrKind::kInts, AttrValue(), false},
      {"concatenate", "axis", AttrKind::kInt, int64_t{0}, false},
      {"split", "indices_or_sections", AttrKind::kAny, AttrValue(), true},
      {"split", "axis", AttrKind::kInt, int64_t{0}, false},
      {"one_hot", "depth", AttrKind::kInt, AttrValue(), true},
      {"one_hot", "axis", AttrKind::kInt, int64_t{-1}, false},
      {"one_hot", "dtype", AttrKind::kString, "float32", false},
      {"reverse_sequence", "seq_axis", AttrKind::kInt, int64_t{1}, false},
      {"reverse_sequence", "batch_axis", AttrKind::kInt, int64_t{0}, false},
      {"unique", "sorted", AttrKind::kBool, true, false},
      {"unique", "axis", AttrKind::kInt, AttrValue(), false},
      {"tfidf_vectorizer", "mode", AttrKind::kString, AttrValue(), true},
      {"tfidf_vectorizer", "pool_int64s", AttrKind::kInts, AttrValue(), true},
      {"tfidf_vectorizer", "weights", AttrKind::kFloats, AttrValue(), false},
      {"cumsum", "axis", AttrKind::kInt, AttrValue(), false},
      {"cumsum", "reverse", AttrKind::kBool, false, false},
      {"einsum", "equation", AttrKind::kString, AttrValue(), true},
      {"zeros", "shape", AttrKind::kInts, AttrValue(), true},
      {"ones", "dtype", AttrKind::kString, "float32", false},
      {"full", "dtype", AttrKind::kString, "", false},
      {"topk", "k", AttrKind::kInt, int64_t{1}, false},
      {"topk", "ret_type", AttrKind::kString, "both", false},
      {"topk", "dtype", AttrKind::kString, "int64", false},
  };
  for (const Expected& x : expected) {
    const OpDef& def = OpRegistry::global().get(x.op);
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : def.attr_specs)
      if (s.name == x.name) spec = &s;
    ASSERT_NE(spec, nullptr) << x.op << "." << x.name;
    EXPECT_EQ(spec->kind, x.kind) << x.op << "." << x.name;
    EXPECT_EQ(spec->default_value, x.default_value) << x.op << "." << x.name;
    EXPECT_EQ(spec->required, x.required) << x.op << "." << x.name;
    EXPECT_FALSE(spec->doc.empty()) << x.op << "." << x.name;
  }
  EXPECT_EQ(OpRegistry::global().get("topk").normalize({}), attrs_to(TopKAttrs{}));
}

TEST(TensorTransformAttrs, CallOpWritesEveryField) {
  register_builtin_ops();
  Var x = make_var("x", f32({2, 3}));
  Expr e = call_op("expand_dims", {x}, ExpandDimsAttrs{.axis = 1});
  const auto* call = as<CallNode>(e);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attrs.to_string(), "axis=1, num_newaxis=1");
  EXPECT_EQ(OpRegistry::global().get("expand_dims").normalize(call->attrs), call->attrs);
}

TEST(TensorTransformAttrs, KernelAdapterNamesOpAndAttribute) {
  const KernelFn& kernel = KernelRegistry::global().get("topk");
  NDArray x = tensor({3}, {1, 3, 2});
  NDArray values = tensor({1}, {0}), indices = NDArray::empty({1}, DType::kInt64);
  std::vector<NDArray> outs{values, indices};
  std::string e = error_of([&] { kernel({{"ret_type", "some"}}, std::span<const NDArray>(&x, 1), outs); });
  expect_names_op_and_attr(e, "topk", "ret_type");
  kernel({{"k", 1}}, std::span<const NDArray>(&x, 1), outs);
  expect_close(outs[0], {3});
  EXPECT_EQ(outs[1].int_at(0), 1);
}

}  // namespace
}  // namespace kiln::testing
