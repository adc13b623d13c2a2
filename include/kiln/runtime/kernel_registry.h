// Reference kernels by op name. A kernel reads its inputs and writes outputs that the
// caller has already allocated with the shapes and dtypes the op's type relation gave.
// Tuple arguments arrive flattened, field by field; tuple results are several outputs.
// Attributes arrive normalised: every attribute of the op's schema is present.
// An output whose extent depends on the data (the relation gives '?', as for NonZero) arrives
// undefined (!defined()); the kernel allocates it. So does a kernel given an output function
// (add_output_fn, Relay's shape functions) when the caller leaves an output undefined; the
// graph executor instead calls the output function itself (output_fn) and hands the kernel
// outputs viewed in blocks it keeps across runs.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>

#include "kiln/attrs/reflect.h"
#include "kiln/runtime/attrs.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

using KernelFn = std::function<void(const Attrs& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs)>;

struct OutputSpec {
  Shape shape;
  DType dtype;
};
// Every output's shape and dtype from the attributes and the inputs.
using OutputFn = std::function<std::vector<OutputSpec>(const Attrs& attrs, std::span<const NDArray> inputs)>;

class KernelRegistry {
 public:
  // Holds every built-in reference kernel.
  static const KernelRegistry& global();

  void add(const std::string& name, KernelFn fn);
  // A kernel reading its attributes as the declared struct T, decoded once per call.
  template <class T>
  void add(const std::string& name,
           std::function<void(const T& attrs, std::span<const NDArray> inputs, std::span<NDArray> outputs)> fn) {
    add(name, [fn = std::move(fn), name](const Attrs& attrs, std::span<const NDArray> in, std::span<NDArray> out) {
      fn(attrs_from<T>(attrs, name), in, out);
    });
  }
  // Makes the kernel `name` (added before) allocate, by `fn`, the outputs it is given undefined.
  void add_output_fn(const std::string& name, OutputFn fn);
  // Whether the kernel allocates outputs of run-time shape: it has an output function, or its
  // op is a dyn.* op, all of which size their results.
  bool sizes_outputs(const std::string& name) const;
  // The output function of kernel `name`, or null when it has none.
  const OutputFn* output_fn(const std::string& name) const;
  const KernelFn* find(const std::string& name) const;
  // Throws kiln::Error naming the op when there is no kernel.
  const KernelFn& get(const std::string& name) const;

 private:
  std::map<std::string, KernelFn> kernels_;
  std::map<std::string, OutputFn> output_fns_;
};

}  // namespace kiln
