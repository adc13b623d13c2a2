// The Top MLIR reader: module text -> ops -> TpuLang graph -> kiln program. Every top.Weight
// gets a zero array of the type it declares (when small), so inputs reach past the weight
// lookup into the graph builder and the conversion to kiln's IR.
#include "fuzz_util.h"
#include "kiln/ir/op.h"
#include "kiln/tpulang/read_top.h"
#include "kiln/tpulang/to_kiln.h"
#include "tpulang/mlir_text.h"

namespace {

constexpr int64_t kMaxWeightElements = 1 << 16;

// Zero weights of the declared types; declarations TpuLang cannot read are left out, so
// read_top reports them.
kiln::NamedArrays zero_weights(const kiln::tpulang::mlir::Module& module) {
  kiln::NamedArrays weights;
  for (const auto& op : module.ops) {
    if (op.name != "top.Weight" || op.result_types.size() != 1) continue;
    try {
      const auto type = kiln::tpulang::mlir::parse_tensor_type(op.result_types[0]);
      int64_t elements = 1;
      for (int64_t d : type.shape) {
        if (d < 0 || d > kMaxWeightElements || (elements *= d) > kMaxWeightElements) elements = -1;
        if (elements < 0) break;
      }
      if (type.none || elements < 0 || type.dtype != "float32") continue;
      weights.emplace_back(op.location, kiln::NDArray::empty(type.shape, kiln::DType::kFloat32));
    } catch (const kiln::Error&) {
    }
  }
  return weights;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::register_builtin_ops();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(kiln::fuzz::as_text(data, size));
  kiln::fuzz::expect_only_user_errors([&] {
    const kiln::NamedArrays weights = zero_weights(kiln::tpulang::mlir::parse_module(text, "<fuzz>"));
    const kiln::tpulang::TopGraph top = kiln::tpulang::read_top(text, weights, "<fuzz>");
    (void)kiln::tpulang::to_kiln(*top.graph, top.inputs, top.outputs);
  });
  return 0;
}
