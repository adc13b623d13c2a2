// Helpers for the data-movement op tests: independent expected values from numpy (run with
// /usr/bin/python3, the interpreter that has numpy, read back as text) and error-message checks.
#pragma once

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/runtime/ndarray.h"

namespace kiln::testing {

struct NumpyArray {
  Shape shape;
  std::vector<double> values;
};

// `code` must assign `r`: one array, or a list/tuple of arrays (e.g. from np.split).
inline std::vector<NumpyArray> numpy_eval(const std::string& code) {
  std::string script = "import numpy as np\n" + code +
                       "\narrays = list(r) if isinstance(r, (list, tuple)) else [r]\n"
                       "print(len(arrays))\n"
                       "for a in arrays:\n"
                       "    a = np.asarray(a)\n"
                       "    print('shape:' + ' '.join(str(d) for d in a.shape))\n"
                       "    print('values:' + ' '.join(repr(float(v)) for v in a.ravel()))\n";
  char path[] = "/tmp/kiln_numpy_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("numpy_eval: cannot create a temporary file");
  bool written = write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  close(fd);
  std::string output;
  int status = -1;
  if (written) {
    FILE* pipe = popen(("/usr/bin/python3 " + std::string(path) + " 2>&1").c_str(), "r");
    if (pipe) {
      char buffer[4096];
      size_t n;
      while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
      status = pclose(pipe);
    }
  }
  unlink(path);
  if (status != 0) throw std::runtime_error("numpy_eval failed:\n" + script + "\n" + output);

  std::istringstream lines(output);
  std::string line;
  std::getline(lines, line);
  std::vector<NumpyArray> arrays(std::stoul(line));
  for (auto& array : arrays) {
    std::getline(lines, line);
    std::istringstream dims(line.substr(line.find(':') + 1));
    for (int64_t d; dims >> d;) array.shape.push_back(d);
    std::getline(lines, line);
    std::istringstream values(line.substr(line.find(':') + 1));
    for (double v; values >> v;) array.values.push_back(v);
  }
  return arrays;
}

// Tensor of `shape` holding (i % modulo) at flat index i; numpy_iota() is the same in numpy.
inline NDArray iota(const Shape& shape, DType dtype = DType::kFloat32, int64_t modulo = 1 << 20) {
  std::vector<double> values(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(static_cast<int64_t>(i) % modulo);
  return NDArray::from_doubles(shape, dtype, values);
}

inline std::string numpy_iota(const Shape& shape, int64_t modulo = 1 << 20) {
  std::ostringstream os;
  os << "(np.arange(" << num_elements(shape) << ") % " << modulo << ").reshape((";
  for (int64_t d : shape) os << d << ",";
  os << "))";
  return os.str();
}

// Exact comparison: data movement must not change any value.
inline void expect_same(const NDArray& actual, const NumpyArray& expected) {
  ASSERT_EQ(actual.shape(), expected.shape);
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.values.size()));
  for (size_t i = 0; i < expected.values.size(); ++i)
    EXPECT_EQ(actual.at(static_cast<int64_t>(i)), expected.values[i]) << "at flat index " << i;
}

// Checks that an error message mentions every part (op, argument, shapes ...).
inline void expect_mentions(const std::string& message, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nlacks: " << part;
}

}  // namespace kiln::testing
