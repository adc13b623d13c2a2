#include "kiln/runtime/shape_variants.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/runtime/dtype.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kFileName = "variants.json";
constexpr int kFormatVersion = 1;

Json tensor_json(const TensorInfo& t) {
  return Json{{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}};
}

TensorInfo tensor_info(const Json& json) {
  TensorInfo t;
  t.name = json.at("name").get<std::string>();
  t.dtype = parse_dtype(json.at("dtype").get<std::string>());
  t.shape = json.at("shape").get<std::vector<int64_t>>();
  for (int64_t d : t.shape)
    if (d < -1) throw Error(cat("tensor '", t.name, "' has a dimension below -1: ", shape_str(t.shape)));
  return t;
}

std::vector<TensorInfo> tensor_infos(const Json& json) {
  std::vector<TensorInfo> infos;
  for (const Json& t : json) infos.push_back(tensor_info(t));
  return infos;
}

std::string shape_key(const Shape& shape) {
  if (shape.empty()) return "s";
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return join(dims, "x");
}

}  // namespace

bool ShapeVariants::is_variants_dir(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kFileName, ec);
}

ShapeVariants ShapeVariants::load(const std::string& dir) {
  const std::string path = (fs::path(dir) / kFileName).string();
  ShapeVariants v;
  v.dir_ = dir;
  try {
    Json json = Json::parse(read_file(path));
    const int version = json.at("kiln_shape_variants").get<int>();
    if (version != kFormatVersion)
      throw std::move(Error("unsupported format version").expected(cat(kFormatVersion), cat(version)));
    v.inputs_ = tensor_infos(json.at("inputs"));
    v.outputs_ = tensor_infos(json.at("outputs"));
    v.compile_args_ = json.at("compile_args").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(e.what()).file(path);
  } catch (Error& e) {
    throw std::move(e.file(path));
  }
  return v;
}

std::string ShapeVariants::to_json(const std::vector<TensorInfo>& inputs, const std::vector<TensorInfo>& outputs,
                                   const std::vector<std::string>& compile_args) {
  Json json{{"kiln_shape_variants", kFormatVersion},
            {"inputs", Json::array()},
            {"outputs", Json::array()},
            {"compile_args", compile_args}};
  for (const TensorInfo& t : inputs) json["inputs"].push_back(tensor_json(t));
  for (const TensorInfo& t : outputs) json["outputs"].push_back(tensor_json(t));
  return json.dump(1) + "\n";
}

std::string ShapeVariants::model_path() const { return (fs::path(dir_) / "model.txt").string(); }

std::string ShapeVariants::key(const std::vector<Shape>& shapes) const {
  if (shapes.size() != inputs_.size())
    throw std::move(Error("wrong number of input shapes").expected(cat(inputs_.size()), cat(shapes.size())));
  std::vector<std::string> parts;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& declared = inputs_[i].shape;
    bool fits = declared.size() == shapes[i].size();
    for (size_t d = 0; fits && d < declared.size(); ++d)
      fits = shapes[i][d] >= 0 && (declared[d] == -1 || declared[d] == shapes[i][d]);
    if (!fits)
      throw std::move(Error(cat("input '", inputs_[i].name, "' has a shape the model does not take"))
                          .expected(shape_str(declared), shape_str(shapes[i])));
    parts.push_back(shape_key(shapes[i]));
  }
  return join(parts, "_");
}

std::string ShapeVariants::variant_dir(const std::vector<Shape>& shapes) const {
  return (fs::path(dir_) / "shapes" / key(shapes)).string();
}

std::vector<std::string> ShapeVariants::compiled() const {
  std::vector<std::string> keys;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(dir_) / "shapes", ec))
    if (fs::is_regular_file(entry.path() / "graph.json", ec)) keys.push_back(entry.path().filename().string());
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::shared_ptr<const Artifact> ShapeVariants::load_variant(const std::vector<Shape>& shapes) const {
  const std::string variant = variant_dir(shapes);
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(variant) / "graph.json", ec)) {
    std::vector<std::string> have = compiled();
    throw std::move(Error(cat("no variant compiled for input shapes ", key(shapes),
                              " (compiled: ", have.empty() ? std::string("none") : join(have),
                              "); kiln run or kiln compile --variant ", "compiles it"))
                        .file(dir_));
  }
  return Artifact::load(variant);
}

}  // namespace kiln
