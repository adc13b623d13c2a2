#include "kiln/attrs/random.h"

#include "kiln/attrs/dtype_attr.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

void check_shape(const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d < 0)
      throw std::move(Error(cat("attribute 'shape' has a negative dimension: ", AttrValue(shape).to_string()))
                          .expected("dimensions >= 0", cat(d)));
}

}  // namespace

void RandomUniformAttrs::validate() const {
  check_shape(shape);
  dtype_attr_or("dtype", dtype, DType::kFloat32);
}

void RandomNormalAttrs::validate() const {
  check_shape(shape);
  dtype_attr_or("dtype", dtype, DType::kFloat32);
}

void BernoulliAttrs::validate() const { dtype_attr_or("dtype", dtype, DType::kFloat32); }

void MultinomialAttrs::validate() const {
  if (sample_size < 1)
    throw std::move(Error("attribute 'sample_size' must be positive").expected(">= 1", cat(sample_size)));
  DType t = dtype_attr_or("dtype", dtype, DType::kInt32);
  if (t != DType::kInt32 && t != DType::kInt64)
    throw std::move(
        Error("attribute 'dtype' must be an index dtype").expected("int32 or int64", std::string(dtype_name(t))));
}

}  // namespace kiln
