// Typed attribute declarations (kiln/attrs/reflect.h): conversion to and from the generic
// Attrs, the schema derived from the declaration, and the errors of the typed adapters.
#include "kiln/attrs/nn.h"
#include "kiln/attrs/reflect.h"
#include "kiln/runtime/kernel_registry.h"
#include "op/attrs_test_util.h"
#include "op_test_util.h"
#include "test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(TypedAttrs, RoundTrip) {
  Conv2DAttrs a;
  a.strides = {2, 1};
  a.padding = {1, 2, 3, 4};
  a.groups = 4;
  a.channels = 8;
  a.out_dtype = "float64";
  Attrs generic = attrs_to(a);
  EXPECT_EQ(generic.to_string(),
            "strides=[2, 1], padding=[1, 2, 3, 4], dilation=[1, 1], groups=4, channels=8, kernel_size=None, "
            "data_layout=\"NCHW\", kernel_layout=\"OIHW\", out_layout=\"\", out_dtype=\"float64\"");
  Conv2DAttrs b = attrs_from<Conv2DAttrs>(generic, "nn.conv2d");
  EXPECT_EQ(b.strides, a.strides);
  EXPECT_EQ(b.padding, a.padding);
  EXPECT_EQ(b.groups, 4);
  EXPECT_EQ(b.channels, std::optional<int64_t>(8));
  EXPECT_FALSE(b.kernel_size.has_value());
  EXPECT_EQ(attrs_to(b), generic);
}

TEST(TypedAttrs, DefaultsAndCoercion) {
  Conv2DTransposeAttrs t = attrs_from<Conv2DTransposeAttrs>({{"strides", int64_t{2}}, {"channels", AttrValue()}});
  EXPECT_EQ(t.strides, Ints{2});  // a single int is a one-element list
  EXPECT_EQ(t.dilation, (Ints{1, 1}));
  EXPECT_EQ(t.kernel_layout, "IOHW");
  EXPECT_EQ(t.output_padding, (Ints{0, 0}));
  EXPECT_FALSE(t.channels.has_value());
  EXPECT_EQ(attrs_from<LeakyReluAttrs>({{"alpha", int64_t{2}}}).alpha, 2.0);
  EXPECT_EQ(attrs_from<QnnConv2DAttrs>({}).out_dtype, "int32");
  Window2D w = attrs_from<Pool2DAttrs>({{"padding", Ints{1, 2}}, {"strides", Ints{3}}}).window();
  EXPECT_EQ(w.strides.h, 3);
  EXPECT_EQ(w.strides.w, 3);
  EXPECT_EQ(w.padding.top, 1);
  EXPECT_EQ(w.padding.left, 2);
  EXPECT_EQ(w.padding.bottom, 1);
  EXPECT_EQ(w.padding.right, 2);
}

TEST(TypedAttrs, Errors) {
  std::string e = error_of([] { attrs_from<Conv2DAttrs>({{"stride", Ints{1, 1}}}, "nn.conv2d"); });
  expect_names_op_and_attr(e, "nn.conv2d", "stride");
  EXPECT_NE(e.find("unknown attribute"), std::string::npos) << e;
  e = error_of([] { attrs_from<Conv2DAttrs>({{"groups", "two"}}, "nn.conv2d"); });
  expect_names_op_and_attr(e, "nn.conv2d", "groups");
  EXPECT_NE(e.find("wrong kind (expected int, found \"two\")"), std::string::npos) << e;
  e = error_of([] { attrs_from<Conv2DAttrs>({{"groups", AttrValue()}}, "nn.conv2d"); });
  expect_names_op_and_attr(e, "nn.conv2d", "groups");
  e = error_of([] { attrs_from<Pool2DAttrs>({{"strides", Ints{0, 1}}}, "nn.max_pool2d"); });
  expect_names_op_and_attr(e, "nn.max_pool2d", "strides");
  EXPECT_NE(e.find("at least 1"), std::string::npos) << e;
  e = error_of([] { attrs_from<Pool3DAttrs>({{"padding", Ints{1, 1}}}, "nn.max_pool3d"); });
  expect_names_op_and_attr(e, "nn.max_pool3d", "padding");
  EXPECT_NE(e.find("must have 1, 3 or 6 values"), std::string::npos) << e;
  e = error_of([] { attrs_from<Conv2DAttrs>({{"data_layout", "NHWC"}}, "nn.conv2d"); });
  expect_names_op_and_attr(e, "nn.conv2d", "data_layout");
}

TEST(TypedAttrs, SchemaDerivedFromDeclaration) {
  register_builtin_ops();
  const OpDef& def = OpRegistry::global().get("nn.conv2d_transpose");
  EXPECT_EQ(def.normalize({}), attrs_to(Conv2DTransposeAttrs{}));
  ASSERT_EQ(def.attr_specs.size(), attr_names<Conv2DTransposeAttrs>().size());
  for (const AttrSpec& spec : def.attr_specs) EXPECT_FALSE(spec.doc.empty()) << spec.name;
  EXPECT_EQ(def.attr_specs[4].kind, AttrKind::kInt);  // channels: optional int, None by default
  EXPECT_TRUE(def.attr_specs[4].default_value.is_none());
  // The generic normalisation of unmigrated callers and the typed decoder agree.
  EXPECT_EQ(OpRegistry::global().get("qnn.conv2d").normalize({{"strides", Ints{2, 2}}}),
            attrs_to(attrs_from<QnnConv2DAttrs>({{"strides", Ints{2, 2}}})));
}

TEST(TypedAttrs, AdaptersNameOpAndAttribute) {
  register_builtin_ops();
  const OpDef& softmax = OpRegistry::global().get("nn.softmax");
  std::string e = error_of([&] { softmax.relation({f32({2, 3})}, {{"axis", "last"}}); });
  expect_names_op_and_attr(e, "nn.softmax", "axis");
  const KernelFn& kernel = KernelRegistry::global().get("nn.leaky_relu");
  NDArray x = tensor({2}, {-1, 1});
  NDArray y = tensor({2}, {0, 0});
  e = error_of([&] { kernel({{"slope", 0.5}}, std::span<const NDArray>(&x, 1), std::span<NDArray>(&y, 1)); });
  expect_names_op_and_attr(e, "nn.leaky_relu", "slope");
  kernel({{"alpha", 0.5}}, std::span<const NDArray>(&x, 1), std::span<NDArray>(&y, 1));
  expect_close(y, {-0.5, 1});
}

}  // namespace
}  // namespace kiln::testing
