#include "frontend/onnx/attributes.h"

#include "frontend/onnx/tensor_proto.h"
#include "kiln/support/error.h"
#include "kiln/support/limits.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

namespace {

using onnx::AttributeProto;

// Models written before IR version 4 may leave `type` unset; the filled field tells.
AttributeProto::AttributeType effective_type(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

const char* kind_name(OnnxAttr::Kind k) {
  switch (k) {
    case OnnxAttr::Kind::kFloat: return "a float";
    case OnnxAttr::Kind::kInt: return "an int";
    case OnnxAttr::Kind::kString: return "a string";
    case OnnxAttr::Kind::kTensor: return "a tensor";
    case OnnxAttr::Kind::kGraph: return "a graph";
    case OnnxAttr::Kind::kFloats: return "a list of floats";
    case OnnxAttr::Kind::kInts: return "a list of ints";
    case OnnxAttr::Kind::kStrings: return "a list of strings";
    case OnnxAttr::Kind::kOther: break;
  }
  return "another kind";
}

OnnxAttr parse_attr(const AttributeProto& a, const std::string& base_dir) {
  OnnxAttr out;
  AttributeProto::AttributeType type = effective_type(a);
  out.type_name = AttributeProto::AttributeType_Name(type);
  switch (type) {
    case AttributeProto::FLOAT: out.kind = OnnxAttr::Kind::kFloat, out.f = a.f(); break;
    case AttributeProto::INT: out.kind = OnnxAttr::Kind::kInt, out.i = a.i(); break;
    case AttributeProto::STRING:
      check_string_bytes(static_cast<int64_t>(a.s().size()), "its value");
      out.kind = OnnxAttr::Kind::kString, out.s = a.s();
      break;
    case AttributeProto::TENSOR:
      out.kind = OnnxAttr::Kind::kTensor;
      out.tensor = ndarray_from_tensor_proto(a.t(), base_dir);
      break;
    case AttributeProto::GRAPH: out.kind = OnnxAttr::Kind::kGraph, out.graph = &a.g(); break;
    case AttributeProto::FLOATS:
      out.kind = OnnxAttr::Kind::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case AttributeProto::INTS:
      out.kind = OnnxAttr::Kind::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case AttributeProto::STRINGS:
      out.kind = OnnxAttr::Kind::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    default: out.kind = OnnxAttr::Kind::kOther; break;
  }
  return out;
}

}  // namespace

AttrValue OnnxAttr::to_attr_value(const std::string& name) const {
  switch (kind) {
    case Kind::kFloat: return AttrValue(f);
    case Kind::kInt: return AttrValue(i);
    case Kind::kString: return AttrValue(s);
    case Kind::kFloats: return AttrValue(floats);
    case Kind::kInts: return AttrValue(ints);
    case Kind::kStrings: {
      AttrValue::List list(strings.begin(), strings.end());
      return AttrValue(std::move(list));
    }
    default: break;
  }
  throw Error(cat("attribute '", name, "' of kind ", type_name, " cannot be passed to a kiln op"));
}

OnnxAttrs::OnnxAttrs(const google::protobuf::RepeatedPtrField<AttributeProto>& protos, const std::string& base_dir) {
  for (const auto& a : protos) {
    check(!a.name().empty(), "an attribute has no name");
    if (!a.ref_attr_name().empty())
      throw Error(cat("attribute '", a.name(), "' refers to a function attribute, which kiln does not support"));
    OnnxAttr parsed;
    try {
      parsed = parse_attr(a, base_dir);
    } catch (const Error& e) {
      throw Error(cat("attribute '", a.name(), "': ", e.what()));
    }
    check(values_.emplace(a.name(), std::move(parsed)).second, "attribute '", a.name(), "' is given twice");
  }
}

const OnnxAttr* OnnxAttrs::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

const OnnxAttr& OnnxAttrs::get(const std::string& name, OnnxAttr::Kind kind) const {
  const OnnxAttr* a = find(name);
  if (!a) throw Error(cat("required attribute '", name, "' is missing"));
  if (a->kind != kind)
    throw std::move(Error(cat("attribute '", name, "' has the wrong kind")).expected(kind_name(kind), a->type_name));
  return *a;
}

int64_t OnnxAttrs::get_int(const std::string& name) const { return get(name, OnnxAttr::Kind::kInt).i; }
int64_t OnnxAttrs::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? get_int(name) : fallback;
}

double OnnxAttrs::get_float(const std::string& name) const { return get(name, OnnxAttr::Kind::kFloat).f; }
double OnnxAttrs::get_float(const std::string& name, double fallback) const {
  return has(name) ? get_float(name) : fallback;
}

const std::string& OnnxAttrs::get_string(const std::string& name) const { return get(name, OnnxAttr::Kind::kString).s; }
std::string OnnxAttrs::get_string(const std::string& name, const std::string& fallback) const {
  return has(name) ? get_string(name) : fallback;
}

std::vector<int64_t> OnnxAttrs::get_ints(const std::string& name) const {
  return get(name, OnnxAttr::Kind::kInts).ints;
}
std::vector<int64_t> OnnxAttrs::get_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  return has(name) ? get_ints(name) : fallback;
}

std::vector<double> OnnxAttrs::get_floats(const std::string& name) const {
  return get(name, OnnxAttr::Kind::kFloats).floats;
}
std::vector<double> OnnxAttrs::get_floats(const std::string& name, const std::vector<double>& fallback) const {
  return has(name) ? get_floats(name) : fallback;
}

const NDArray& OnnxAttrs::get_tensor(const std::string& name) const {
  return get(name, OnnxAttr::Kind::kTensor).tensor;
}

}  // namespace kiln::frontend
