// Checks shared by the typed-attribute tests of the op families: the schema an op derives from
// its declaration, round trips through the generic Attrs, and one-line errors naming op and
// attribute.
#pragma once

#include <string>

#include "kiln/attrs/reflect.h"
#include "op_test_util.h"
#include "test_util.h"

namespace kiln::testing {

inline void expect_names_op_and_attr(const std::string& e, const std::string& op, const std::string& attr) {
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_NE(e.find("op '" + op + "'"), std::string::npos) << e;
  EXPECT_NE(e.find("'" + attr + "'"), std::string::npos) << e;
}

// The op's schema is T's declaration: same names in order, every one documented, and the
// defaults of T (required attributes have none).
template <class T>
void expect_schema_of(const std::string& op) {
  register_builtin_ops();
  SCOPED_TRACE(op);
  const OpDef& def = OpRegistry::global().get(op);
  const std::vector<std::string> names = attr_names<T>();
  ASSERT_EQ(def.attr_specs.size(), names.size());
  const Attrs defaults = attrs_to(T{});
  for (size_t i = 0; i < names.size(); ++i) {
    const AttrSpec& spec = def.attr_specs[i];
    EXPECT_EQ(spec.name, names[i]);
    EXPECT_FALSE(spec.doc.empty()) << spec.name;
    if (!spec.required) {
      EXPECT_EQ(spec.default_value, defaults.get(spec.name)) << spec.name;
    }
  }
}

// `a` survives attrs_to / attrs_from, and the op's normalisation keeps it as it is.
template <class T>
void expect_round_trip(const T& a, const std::string& op) {
  register_builtin_ops();
  SCOPED_TRACE(op);
  const Attrs generic = attrs_to(a);
  EXPECT_EQ(attrs_to(attrs_from<T>(generic, op)), generic);
  EXPECT_EQ(OpRegistry::global().get(op).normalize(generic), generic);
}

}  // namespace kiln::testing
