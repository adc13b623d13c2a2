// The part of MLIR's text format that Top modules use, parsed without MLIR: a module with
// attributes, one func.func of generic-form ops (`%N = "top.Op"(%a, %b) {attrs} : (types) ->
// type loc(...)`), a return, and `#locN = loc("name")` aliases. Types stay text (tensor
// types are split by parse_tensor_type); locations are resolved to their names. Used by
// read_top.cc, which turns the ops into a TpuLang graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/ndarray.h"
#include "kiln/tpulang/graph.h"

namespace kiln::tpulang::mlir {

struct Position {
  int64_t line = 1;
  int64_t col = 1;
};

// An attribute as written: typed values become an Attr; anything else (dense<...>, nested
// dictionaries, dialect attributes) is kept as raw text only.
struct AttrValue {
  std::optional<Attr> value;
  std::string text;
  Position at;
};

struct Op {
  std::vector<std::string> results;  // "%3"
  std::string name;                  // "top.Conv", "func.return"
  std::vector<std::string> operands;
  std::vector<std::pair<std::string, AttrValue>> attrs;
  std::vector<std::string> operand_types;
  std::vector<std::string> result_types;
  std::string location;  // the name its loc(...) resolves to; empty for loc(unknown)
  Position at;
};

struct Argument {
  std::string name;  // "%arg0"
  std::string type;
};

struct Module {
  std::vector<std::pair<std::string, AttrValue>> attrs;
  std::vector<Argument> arguments;  // of @main
  std::vector<Op> ops;              // @main's body, the return last
};

// Throws kiln::Error naming `source` and `line L:C` on text it cannot read.
Module parse_module(const std::string& text, const std::string& source);

// tensor<1x3x224x224xf32>, tensor<4x!quant.uniform<u8:f32, 1.000000e-01:128>>, none.
struct TensorType {
  bool none = false;
  Shape shape;
  std::string dtype;  // TpuLang's name: float32, int8, ...
  std::vector<double> scale;
  std::vector<int64_t> zero_point;
  int64_t quant_axis = -1;  // the axis of per-channel parameters, -1 for per-tensor
};

// Throws a plain kiln::Error (the caller adds where) on a type TpuLang cannot hold.
TensorType parse_tensor_type(const std::string& text);

}  // namespace kiln::tpulang::mlir
