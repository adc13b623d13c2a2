// Type relation and reference kernel of einsum.
#include "op/numpy_eval.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

std::vector<double> values(int64_t n, int salt) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 5 + salt) % 7) - 3);
  return v;
}

TEST(TensorEinsumType, ExplicitImplicitAndEllipsis) {
  auto t = [](std::vector<Type> ts) { return tuple_type(std::move(ts)); };
  EXPECT_EQ(type_str(infer_op("einsum", {t({f32({2, 3}), f32({3, 4})})}, {{"equation", "ij,jk->ik"}})),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(type_str(infer_op("einsum", {t({f32({2, 3}), f32({3, 4})})}, {{"equation", "ij,jk"}})),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(type_str(infer_op("einsum", {t({f32({5, 1, 3, 3}), f32({4, 3, 2})})}, {{"equation", "...ij,...jk"}})),
            "Tensor[(5, 4, 3, 2), float32]");
  EXPECT_EQ(type_str(infer_op("einsum", {t({f32({3, 3})})}, {{"equation", "ii"}})), "float32");
}

TEST(TensorEinsumType, MismatchedExtentsAndBadEquations) {
  auto t = [](std::vector<Type> ts) { return tuple_type(std::move(ts)); };
  std::string msg = infer_op_error("einsum", {t({f32({2, 3}), f32({4, 5})})}, {{"equation", "ij,jk->ik"}});
  EXPECT_NE(msg.find("'einsum'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'j'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3), (4, 5)"), std::string::npos) << msg;
  msg = infer_op_error("einsum", {t({f32({2, 3})})}, {{"equation", "ijk->i"}});
  EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
  msg = infer_op_error("einsum", {t({f32({2, 3})})}, {{"equation", "ij->iz"}});
  EXPECT_NE(msg.find("'z'"), std::string::npos) << msg;
  msg = infer_op_error("einsum", {t({f32({2, 3})})}, {{"equation", "i1->i"}});
  EXPECT_NE(msg.find("invalid character"), std::string::npos) << msg;
}

TEST(TensorEinsumKernel, CasesMatchNumpy) {
  struct Case {
    std::string equation;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {{"ij,jk->ik", {{2, 3}, {3, 4}}},
                                   {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}},
                                   {"ii->i", {{3, 3}}},
                                   {"...ii->...i", {{2, 3, 3}}},
                                   {"ij->ji", {{2, 3}}},
                                   {"i,i", {{4}, {4}}},
                                   {"ij->", {{3, 2}}},
                                   {"...j,j->...", {{2, 1, 3}, {3}}},
                                   {"ba,ca", {{2, 3}, {4, 3}}},
                                   {"i,j,k->ijk", {{2}, {3}, {2}}}};
  std::vector<std::string> exprs;
  for (const Case& c : cases) {
    std::string args;
    for (size_t k = 0; k < c.shapes.size(); ++k)
      args += ", " + numpy::array(c.shapes[k], values(num_elements(c.shapes[k]), static_cast<int>(k)), "float64");
    exprs.push_back("np.einsum('" + c.equation + "'" + args + ")");
  }
  auto expected = numpy::eval_many(exprs);
  ASSERT_EQ(expected.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].equation);
    std::vector<NDArray> operands, int_operands;
    for (size_t k = 0; k < cases[i].shapes.size(); ++k) {
      std::vector<double> v = values(num_elements(cases[i].shapes[k]), static_cast<int>(k));
      operands.push_back(tensor(cases[i].shapes[k], v));
      int_operands.push_back(tensor(cases[i].shapes[k], v, DType::kInt32));
    }
    expect_close(run_op("einsum", {operands}, {{"equation", cases[i].equation}})[0], expected[i]);
    expect_close(run_op("einsum", {int_operands}, {{"equation", cases[i].equation}})[0], expected[i], 0, 0);
  }
}

}  // namespace
}  // namespace kiln::testing
