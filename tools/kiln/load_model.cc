#include <fstream>
#include <sstream>

#include "cli.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::cli {

namespace {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file").file(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

LoadedModel load_ir_text(const std::string& path) {
  LoadedModel m;
  m.module = parse_module(read_text_file(path), path);
  try {
    infer_types(m.module);
  } catch (Error& e) {
    throw e.file(path);
  }
  const Function& main = m.module.lookup("main");
  for (const auto& p : main->params) m.input_names.push_back(p->name);
  const Type& ret = as_func(main->checked_type())->ret;
  size_t outputs = as_tuple(ret) ? as_tuple(ret)->fields.size() : 1;
  for (size_t i = 0; i < outputs; ++i) m.output_names.push_back(cat("output_", i));
  return m;
}

}  // namespace

LoadedModel load_model(const std::string& path, const Args& args) {
  if (ends_with(path, ".onnx")) throw Error("ONNX models are not supported yet").file(path);
  check(args.all("--shape").empty(), "--shape applies to ONNX models only");
  return load_ir_text(path);
}

}  // namespace kiln::cli
