#include <cmath>
#include <sstream>

#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

// ---- type relation ----

TEST(ImageResizeType, Shapes) {
  EXPECT_EQ(type_str(infer_op("image.resize2d", {f32({1, 3, 4, 5})}, {{"size", Ints{8, 10}}})),
            "Tensor[(1, 3, 8, 10), float32]");
  EXPECT_EQ(type_str(infer_op("image.resize2d", {f32({-1, 4, 5, 3})}, {{"size", Ints{2, 2}}, {"layout", "NHWC"}})),
            "Tensor[(?, 2, 2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("image.resize2d", {tensor_type({1, 1, 2, 2}, DType::kUInt8)},
                              {{"size", Ints{3, 3}}, {"out_dtype", "float32"}})),
            "Tensor[(1, 1, 3, 3), float32]");
}

TEST(ImageResizeType, Errors) {
  std::string e = infer_op_error("image.resize2d", {f32({1, 3, 4})}, {{"size", Ints{8, 8}}});
  EXPECT_NE(e.find("argument 'data'"), std::string::npos) << e;
  EXPECT_NE(e.find("(1, 3, 4)"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})}, {{"size", Ints{8}}});
  EXPECT_NE(e.find("'size'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})}, {{"size", Ints{8, 8}}, {"method", "bilinear"}});
  EXPECT_NE(e.find("'method'"), std::string::npos) << e;
  EXPECT_NE(e.find("\"bilinear\""), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})},
                     {{"size", Ints{8, 8}}, {"coordinate_transformation_mode", "tf_half_pixel"}});
  EXPECT_NE(e.find("'coordinate_transformation_mode'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})}, {{"size", Ints{8, 8}}, {"rounding_method", "up"}});
  EXPECT_NE(e.find("'rounding_method'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})}, {{"size", Ints{8, 8}}, {"roi", Floats{0, 1}}});
  EXPECT_NE(e.find("'roi'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})}, {{"size", Ints{8, 8}}, {"scales", Floats{2, 0}}});
  EXPECT_NE(e.find("'scales'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 3, 4, 4})});
  EXPECT_NE(e.find("'size'"), std::string::npos) << e;
}

// ---- kernel, hand-worked ----

TEST(ImageResizeKernel, NearestUpsample) {
  auto out =
      run_op("image.resize2d", {tensor({1, 1, 2, 2}, {1, 2, 3, 4})},
             {{"size", Ints{4, 4}}, {"method", "nearest_neighbor"}, {"coordinate_transformation_mode", "asymmetric"}});
  expect_close(out[0], {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(ImageResizeKernel, NearestRoundingMethods) {
  // half_pixel from 4 to 3 columns samples x = 1/6, 3/2, 17/6; the middle one is a tie.
  NDArray x = tensor({1, 1, 1, 4}, {10, 20, 30, 40});
  Attrs attrs = {{"size", Ints{1, 3}}, {"method", "nearest_neighbor"}};
  attrs.set("rounding_method", "round_prefer_floor");
  expect_close(run_op("image.resize2d", {x}, attrs)[0], {10, 20, 40});
  attrs.set("rounding_method", "round_prefer_ceil");
  expect_close(run_op("image.resize2d", {x}, attrs)[0], {10, 30, 40});
  attrs.set("rounding_method", "floor");
  expect_close(run_op("image.resize2d", {x}, attrs)[0], {10, 20, 30});
  attrs.set("rounding_method", "ceil");
  expect_close(run_op("image.resize2d", {x}, attrs)[0], {20, 30, 40});
}

TEST(ImageResizeKernel, LinearHalfPixelAndAlignCorners) {
  NDArray x = tensor({1, 1, 1, 2}, {0, 10});
  // Samples at -0.25, 0.25, 0.75, 1.25; outside the input the edge value holds.
  expect_close(run_op("image.resize2d", {x}, {{"size", Ints{1, 4}}})[0], {0, 2.5, 7.5, 10});
  expect_close(
      run_op("image.resize2d", {x}, {{"size", Ints{1, 3}}, {"coordinate_transformation_mode", "align_corners"}})[0],
      {0, 5, 10});
  // Bilinear: the centre of a 2x2 block is its mean.
  auto out = run_op("image.resize2d", {tensor({1, 1, 2, 2}, {1, 2, 3, 5})},
                    {{"size", Ints{3, 3}}, {"coordinate_transformation_mode", "align_corners"}});
  expect_close(out[0], {1, 1.5, 2, 2, 2.75, 3.5, 3, 4, 5});
}

TEST(ImageResizeKernel, CubicReproducesLinesAndExcludesOutside) {
  // Keys' kernel is exact on linear data where all four taps are inside.
  NDArray x = tensor({1, 1, 1, 4}, {0, 1, 2, 3});
  Attrs attrs = {{"size", Ints{1, 8}}, {"method", "cubic"}, {"coordinate_transformation_mode", "asymmetric"}};
  std::vector<double> out = run_op("image.resize2d", {x}, attrs)[0].to_doubles();
  EXPECT_NEAR(out[2], 1.0, 1e-6);
  EXPECT_NEAR(out[3], 1.5, 1e-6);
  EXPECT_NEAR(out[4], 2.0, 1e-6);
  // At x = 0.5 the left tap clamps to the edge: weights (-1/16, 9/16, 9/16, -1/16) on (0, 0, 1, 2).
  EXPECT_NEAR(out[1], 0.4375, 1e-6);
  attrs.set("cubic_exclude", 1);
  out = run_op("image.resize2d", {x}, attrs)[0].to_doubles();
  EXPECT_NEAR(out[1], 0.4375 / 1.0625, 1e-6);
  EXPECT_NEAR(out[3], 1.5, 1e-6);
}

TEST(ImageResizeKernel, TfCropAndResizeExtrapolates) {
  // roi columns 0.5 .. 1.5 of a 3-wide row: samples at x = 1, 2, 3; 3 lies outside.
  auto out = run_op("image.resize2d", {tensor({1, 1, 1, 3}, {0, 10, 20})},
                    {{"size", Ints{1, 3}},
                     {"coordinate_transformation_mode", "tf_crop_and_resize"},
                     {"roi", Floats{0, 0.5, 1, 1.5}},
                     {"extrapolation_value", -1.0}});
  expect_close(out[0], {10, 20, -1});
}

TEST(ImageResizeKernel, ScalesOverrideTheCoordinateRatio) {
  // ONNX test_resize_downsample_scales_linear: scale 0.6 rather than 2/4 and 1/2.
  auto out = run_op("image.resize2d", {tensor({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})},
                    {{"size", Ints{1, 2}}, {"scales", Floats{0.6, 0.6}}});
  expect_close(out[0], {2.6666665, 4.3333333});
}

TEST(ImageResizeKernel, NhwcAndIntegerRounding) {
  // NHWC 1x1x2x2: channel 0 is (0, 10), channel 1 is (100, 200).
  auto out = run_op("image.resize2d", {tensor({1, 1, 2, 2}, {0, 100, 10, 200})},
                    {{"size", Ints{1, 3}}, {"layout", "NHWC"}, {"coordinate_transformation_mode", "align_corners"}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 2}));
  expect_close(out[0], {0, 100, 5, 150, 10, 200});
  out = run_op("image.resize2d", {tensor({1, 1, 1, 2}, {0, 255}, DType::kUInt8)},
               {{"size", Ints{1, 3}}, {"coordinate_transformation_mode", "align_corners"}});
  EXPECT_EQ(out[0].dtype(), DType::kUInt8);
  EXPECT_EQ(out[0].to_ints(), (std::vector<int64_t>{0, 128, 255}));
}

// NCHW{x}c (AlterOpLayout's blocked channels) gives the NCHW result, blocked.
TEST(ImageResizeKernel, BlockedChannelsMatchNchw) {
  auto relayout = [](const NDArray& x, const std::string& src, const std::string& dst) {
    return run_op("layout_transform", {x}, {{"src_layout", src}, {"dst_layout", dst}})[0];
  };
  std::vector<double> values(2 * 16 * 3 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.7 * static_cast<double>(i)) * 10;
  const NDArray x = tensor({2, 16, 3, 5}, values);
  for (const char* method : {"nearest_neighbor", "linear"}) {
    for (const char* layout : {"NCHW8c", "NCHW16c"}) {
      SCOPED_TRACE(std::string(method) + " " + layout);
      Attrs attrs{{"size", Ints{7, 4}}, {"method", method}};
      const NDArray want = relayout(run_op("image.resize2d", {x}, attrs)[0], "NCHW", layout);
      attrs.set("layout", AttrValue(layout));
      const NDArray got = run_op("image.resize2d", {relayout(x, "NCHW", layout)}, attrs)[0];
      EXPECT_EQ(got.shape(), want.shape());
      expect_close(got, want.to_doubles());
    }
  }
  EXPECT_EQ(type_str(infer_op("image.resize2d", {f32({1, 2, 4, 5, 8})}, {{"size", Ints{8, 10}}, {"layout", "NCHW8c"}})),
            "Tensor[(1, 2, 8, 10, 8), float32]");
  const std::string e =
      infer_op_error("image.resize2d", {f32({1, 2, 4, 5, 4})}, {{"size", Ints{8, 10}}, {"layout", "NCHW8c"}});
  EXPECT_NE(e.find("block"), std::string::npos) << e;
}

// ---- ONNX's own test cases (expected outputs shipped with the onnx package) ----

struct OnnxCase {
  std::string name;
  Attrs attrs;
  NDArray x;
  std::vector<double> y;
};

// The script translates every 4-D test_resize_* case into kiln attributes, one record per case.
const char* kOnnxCasesScript = R"(
import glob, os, onnx
from onnx import numpy_helper
root = os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node')
for d in sorted(glob.glob(os.path.join(root, 'test_resize_*'))):
    model = onnx.load(os.path.join(d, 'model.onnx'))
    node = [n for n in model.graph.node if n.op_type == 'Resize'][0]
    values = {n.output[0]: numpy_helper.to_array(n.attribute[0].t)
              for n in model.graph.node if n.op_type == 'Constant'}
    for i, graph_input in enumerate(model.graph.input):
        t = onnx.TensorProto()
        with open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'rb') as f:
            t.ParseFromString(f.read())
        values[graph_input.name] = numpy_helper.to_array(t)
    t = onnx.TensorProto()
    with open(os.path.join(d, 'test_data_set_0', 'output_0.pb'), 'rb') as f:
        t.ParseFromString(f.read())
    y = numpy_helper.to_array(t)
    a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
    s = lambda v: v.decode() if isinstance(v, bytes) else v
    names = list(node.input) + [''] * 4
    x = values[names[0]]
    if x.ndim != 4 or y.shape[:2] != x.shape[:2]:
        continue
    roi = values[names[1]] if names[1] and values[names[1]].size else np.zeros(8)
    method = {'nearest': 'nearest_neighbor'}.get(s(a.get('mode', 'nearest')), s(a.get('mode', 'nearest')))
    print('case', os.path.basename(d))
    print('attrs', method, s(a.get('coordinate_transformation_mode', 'half_pixel')),
          s(a.get('nearest_mode', 'round_prefer_floor')), repr(float(a.get('cubic_coeff_a', -0.75))),
          int(a.get('exclude_outside', 0)), repr(float(a.get('extrapolation_value', 0.0))))
    print('roi', *[repr(float(roi[i])) for i in (2, 3, 6, 7)])
    if names[2] and values[names[2]].size:
        print('scales', *[repr(float(v)) for v in values[names[2]][2:]])
    else:
        print('scales none')
    print('dims', *x.shape, *y.shape[2:])
    print('x', *[repr(float(v)) for v in x.ravel()])
    print('y', *[repr(float(v)) for v in y.ravel()])
)";

std::vector<OnnxCase> onnx_resize_cases() {
  std::istringstream lines(python_output(kOnnxCasesScript));
  std::vector<OnnxCase> cases;
  std::string line;
  Shape x_shape;
  Ints size;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "case") {
      cases.emplace_back();
      in >> cases.back().name;
      continue;
    }
    if (cases.empty()) continue;
    OnnxCase& c = cases.back();
    if (key == "attrs") {
      std::string method, mode, rounding;
      double alpha, extrapolation;
      int64_t exclude;
      in >> method >> mode >> rounding >> alpha >> exclude >> extrapolation;
      c.attrs = {{"method", method},
                 {"coordinate_transformation_mode", mode},
                 {"rounding_method", rounding},
                 {"cubic_alpha", alpha},
                 {"cubic_exclude", exclude},
                 {"extrapolation_value", extrapolation}};
    } else if (key == "roi") {
      Floats roi(4);
      for (double& r : roi) in >> r;
      c.attrs.set("roi", roi);
    } else if (key == "scales") {
      std::string first;
      in >> first;
      if (first != "none") {
        double second;
        in >> second;
        c.attrs.set("scales", Floats{std::stod(first), second});
      }
    } else if (key == "dims") {
      x_shape.assign(4, 0);
      size.assign(2, 0);
      for (int64_t& d : x_shape) in >> d;
      for (int64_t& d : size) in >> d;
      c.attrs.set("size", size);
    } else if (key == "x" || key == "y") {
      std::vector<double> values;
      double v;
      while (in >> v) values.push_back(v);
      if (key == "x")
        c.x = tensor(x_shape, values);
      else
        c.y = values;
    }
  }
  return cases;
}

TEST(ImageResizeKernel, MatchesOnnxBackendTestCases) {
  std::vector<OnnxCase> cases = onnx_resize_cases();
  // onnx 1.12 ships 23 four-dimensional resize cases; newer versions ship more.
  EXPECT_GE(cases.size(), 20u);
  for (const OnnxCase& c : cases) {
    SCOPED_TRACE(c.name + ": " + c.attrs.to_string());
    auto out = run_op("image.resize2d", {c.x}, c.attrs);
    expect_close(out[0], c.y, 1e-5, 1e-5);
  }
}

// ---- comparison with ONNX's reference implementation on random data ----

// Loads the interpolation functions of onnx's Resize test generator (onnx 1.12:
// onnx/backend/test/case/node/resize.py) without importing the onnx package, which takes
// most of a second: only the module-level functions before the test class are executed.
const char* kOnnxReferenceFunctions = R"(
import importlib.util, os
_path = os.path.join(os.path.dirname(importlib.util.find_spec('onnx').origin),
                     'backend', 'test', 'case', 'node', 'resize.py')
_source = open(_path).read().split('class Resize')[0]
exec('\n'.join(l for l in _source.splitlines() if not l.startswith(('from .', 'import onnx'))))
)";

TEST(ImageResizeKernel, MatchesOnnxReferenceOnRandomData) {
  NDArray x = sample_tensor({1, 1, 4, 5}, 61, -2, 2);
  const Ints size = {6, 3};  // upsample rows, downsample columns
  struct Mode {
    std::string method, coord, rounding, python_coeffs;
    int exclude;
  };
  std::vector<Mode> modes;
  for (std::string coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
    modes.push_back({"linear", coord, "", "linear_coeffs", 0});
    modes.push_back({"cubic", coord, "", "lambda r: cubic_coeffs(r, -0.5)", 0});
    modes.push_back({"cubic", coord, "", "lambda r: cubic_coeffs(r, -0.5)", 1});
    for (std::string rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      modes.push_back({"nearest_neighbor", coord, rounding, "lambda r: nearest_coeffs(r, '" + rounding + "')", 0});
  }
  std::ostringstream script;
  script << kOnnxReferenceFunctions << "x = " << np_array(x) << "\n";
  for (const Mode& m : modes)
    script << "print(' '.join(repr(float(v)) for v in interpolate_nd(x, " << m.python_coeffs
           << ", output_size=[1, 1, 6, 3], coordinate_transformation_mode='" << m.coord
           << "', exclude_outside=" << m.exclude << ").ravel()))\n";
  std::istringstream lines(python_output(script.str()));
  for (const Mode& m : modes) {
    SCOPED_TRACE(m.method + " " + m.coord + " " + m.rounding + " exclude=" + std::to_string(m.exclude));
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    std::vector<double> expected;
    std::istringstream in(line);
    for (double v; in >> v;) expected.push_back(v);
    Attrs attrs = {{"size", size},
                   {"method", m.method},
                   {"coordinate_transformation_mode", m.coord},
                   {"rounding_method", m.rounding},
                   {"cubic_exclude", m.exclude}};
    expect_close(run_op("image.resize2d", {x}, attrs)[0], expected, 1e-5, 1e-5);
  }
}

}  // namespace
}  // namespace kiln::testing
