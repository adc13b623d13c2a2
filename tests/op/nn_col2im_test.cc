// Type relation and reference kernel of nn.col2im, against a numpy loop.
#include <cmath>

#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Attrs col2im(std::vector<int64_t> image, std::vector<int64_t> block, std::vector<int64_t> strides = {1},
             std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0}) {
  return {{"image_shape", image},
          {"block_shape", block},
          {"strides", strides},
          {"dilation", dilation},
          {"padding", padding}};
}

TEST(NnCol2ImType, OutputIsTheImage) {
  // 5x5 image, 2x2 blocks: 4x4 positions; C = 12 / 4 = 3.
  EXPECT_EQ(type_str(infer_op("nn.col2im", {f32({2, 12, 16})}, col2im({5, 5}, {2, 2}))),
            "Tensor[(2, 3, 5, 5), float32]");
  // Strides 2, padding 1 on each side, dilation 2: (5 + 2 - 3) / 2 + 1 = 3 positions per axis.
  EXPECT_EQ(type_str(infer_op("nn.col2im", {f32({1, 4, 9})}, col2im({5, 5}, {2, 2}, {2}, {2}, {1}))),
            "Tensor[(1, 1, 5, 5), float32]");
  EXPECT_EQ(type_str(infer_op("nn.col2im", {f32({kAnyDim, 6, 4})}, col2im({5}, {2}, {1}))),
            "Tensor[(?, 3, 5), float32]");  // 1-D
}

TEST(NnCol2ImType, ErrorsNameAttributesAndShapes) {
  std::string e = infer_op_error("nn.col2im", {f32({2, 12, 15})}, col2im({5, 5}, {2, 2}));
  EXPECT_NE(e.find("'nn.col2im'"), std::string::npos) << e;
  EXPECT_NE(e.find("axis 2"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 16, found 15"), std::string::npos) << e;
  e = infer_op_error("nn.col2im", {f32({2, 10, 16})}, col2im({5, 5}, {2, 2}));
  EXPECT_NE(e.find("multiple of the block size 4"), std::string::npos) << e;
  e = infer_op_error("nn.col2im", {f32({2, 12, 16})}, col2im({5, 5}, {2}));
  EXPECT_NE(e.find("'block_shape'"), std::string::npos) << e;
  e = infer_op_error("nn.col2im", {f32({2, 12, 16})}, col2im({3, 3}, {2, 2}, {1}, {4}));
  EXPECT_NE(e.find("does not fit"), std::string::npos) << e;
  e = infer_op_error("nn.col2im", {f32({2, 12, 16})}, col2im({5, 5}, {2, 2}, {0}));
  EXPECT_NE(e.find("'strides'"), std::string::npos) << e;
  e = infer_op_error("nn.col2im", {f32({12, 16})}, col2im({5, 5}, {2, 2}));
  EXPECT_NE(e.find("3-D"), std::string::npos) << e;
}

// The numpy reference scatters every block element as ONNX's reference implementation does.
const char* kCol2ImReference =
    "def col2im(x, image, block, s, d, pb):\n"
    "    n, rows, L = x.shape\n"
    "    k = int(np.prod(block))\n"
    "    c = rows // k\n"
    "    blocks = [(image[a] + 2 * pb[a] - d[a] * (block[a] - 1) - 1) // s[a] + 1 for a in range(len(image))]\n"
    "    out = np.zeros((n, c) + tuple(image))\n"
    "    cols = x.reshape(n, c, k, L)\n"
    "    for e, el in enumerate(np.ndindex(*block)):\n"
    "        for l, at in enumerate(np.ndindex(*blocks)):\n"
    "            pos = tuple(at[a] * s[a] - pb[a] + el[a] * d[a] for a in range(len(image)))\n"
    "            if all(0 <= pos[a] < image[a] for a in range(len(image))):\n"
    "                out[(slice(None), slice(None)) + pos] += cols[:, :, e, l]\n"
    "    return out\n";

void expect_col2im(const Shape& shape, std::vector<int64_t> image, std::vector<int64_t> block, std::vector<int64_t> s,
                   std::vector<int64_t> d, std::vector<int64_t> p) {
  std::vector<double> xs;
  for (int64_t i = 0; i < num_elements(shape); ++i) xs.push_back(std::cos(static_cast<double>(i) * 0.61) * 2);
  auto list = [](const std::vector<int64_t>& v) {
    std::string out = "[";
    for (int64_t x : v) out += std::to_string(x) + ",";
    return out + "]";
  };
  std::vector<double> want = numpy::eval("col2im(" + numpy::array(shape, xs, "float64") + ", " + list(image) + ", " +
                                             list(block) + ", " + list(s) + ", " + list(d) + ", " + list(p) + ")",
                                         kCol2ImReference);
  std::vector<int64_t> padding = p;
  padding.insert(padding.end(), p.begin(), p.end());
  NDArray out = run_op("nn.col2im", {tensor(shape, xs)}, col2im(image, block, s, d, padding))[0];
  expect_close(out, want);
}

TEST(NnCol2ImKernel, MatchesNumpy) {
  expect_col2im({1, 4, 16}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {0, 0});
  expect_col2im({2, 6, 9}, {5, 5}, {3, 1}, {2, 2}, {1, 1}, {1, 0});                  // 2 channels, strides, padding
  expect_col2im({1, 4, 9}, {5, 6}, {2, 2}, {2, 2}, {2, 3}, {1, 1});                  // dilation
  expect_col2im({1, 3, 4}, {6}, {3}, {1}, {1}, {0});                                 // 1-D
  expect_col2im({1, 24, 9}, {4, 5, 3}, {2, 3, 2}, {1, 1, 1}, {1, 1, 2}, {0, 0, 0});  // 3-D, dilated
}

TEST(NnCol2ImKernel, AsymmetricPaddingDropsThePaddedElements) {
  // A 1x3 image, blocks of 2 with padding (1 before, 0 after): positions -1 and 0, then 0 and
  // 1, then 1 and 2; the element at -1 is dropped.
  NDArray x = tensor({1, 2, 3}, {10, 20, 30, 1, 2, 3});
  NDArray out = run_op("nn.col2im", {x}, col2im({3}, {2}, {1}, {1}, {1, 0}))[0];
  expect_close(out, {1 + 20, 2 + 30, 3});
}

}  // namespace
}  // namespace kiln::testing
