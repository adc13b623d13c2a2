// Converters: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli,
// Multinomial onto the random.* ops. ONNX's float 'seed' becomes the ops' integer seed.
#include "kiln/attrs/random.h"

#include <cmath>

#include "frontend/onnx/converters/converter_util.h"

namespace kiln::frontend {

namespace {

// The seed attribute when present (ONNX stores it as a float).
std::optional<int64_t> seed_of(ConvertContext& c) {
  if (const OnnxAttr* seed = c.attrs().find("seed")) return static_cast<int64_t>(std::llround(seed->f));
  return std::nullopt;
}

// The 'dtype' attribute, or `fallback` when absent.
std::string dtype_or(ConvertContext& c, const std::string& fallback) {
  return c.attrs().has("dtype") ? dtype_name_of_onnx_type(c.attrs().get_int("dtype"), "dtype") : fallback;
}

// The shape of a *Like node's input, which must be static.
std::vector<int64_t> like_shape(ConvertContext& c) {
  const Shape& shape = c.input_shape(0);
  for (int64_t d : shape) check(d != kAnyDim, "the input's shape must be static, found ", shape_str(shape));
  return shape;
}

// 'uniform' or 'normal' samples; `like` takes shape and dtype from the input.
ConvertFn sampler(bool uniform, bool like) {
  return [uniform, like](ConvertContext& c) -> ConvertResult {
    std::vector<int64_t> shape = like ? like_shape(c) : c.attrs().get_ints("shape");
    std::string dtype = dtype_or(c, like ? std::string(dtype_name(c.input_dtype(0))) : "float32");
    if (uniform)
      return call_op("random.uniform", {},
                     RandomUniformAttrs{.shape = shape,
                                        .low = c.attrs().get_float("low", 0.0),
                                        .high = c.attrs().get_float("high", 1.0),
                                        .dtype = dtype,
                                        .seed = seed_of(c)});
    return call_op("random.normal", {},
                   RandomNormalAttrs{.shape = shape,
                                     .mean = c.attrs().get_float("mean", 0.0),
                                     .scale = c.attrs().get_float("scale", 1.0),
                                     .dtype = dtype,
                                     .seed = seed_of(c)});
  };
}

ConvertResult convert_bernoulli(ConvertContext& c) {
  return call_op("random.bernoulli", {c.input(0)}, BernoulliAttrs{.dtype = dtype_or(c, ""), .seed = seed_of(c)});
}

ConvertResult convert_multinomial(ConvertContext& c) {
  return call_op(
      "random.multinomial", {c.input(0)},
      MultinomialAttrs{
          .sample_size = c.attrs().get_int("sample_size", 1), .dtype = dtype_or(c, "int32"), .seed = seed_of(c)});
}

}  // namespace

void register_random_converters(ConverterRegistry& r) {
  r.add("RandomUniform", 1, sampler(true, false));
  r.add("RandomNormal", 1, sampler(false, false));
  r.add("RandomUniformLike", 1, sampler(true, true));
  r.add("RandomNormalLike", 1, sampler(false, true));
  r.add("Bernoulli", 15, convert_bernoulli);
  r.add("Multinomial", 7, convert_multinomial);
}

}  // namespace kiln::frontend
