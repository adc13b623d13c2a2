// Helpers for op tests that compare a reference kernel with numpy: deterministic sample
// tensors, their Python literals, and running a script with /usr/bin/python3 (the
// interpreter that has numpy and onnx) to read back the numbers it prints.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/runtime/ndarray.h"
#include "kiln/support/strings.h"

namespace kiln::testing {

// Values spread over [lo, hi), the same on every run.
inline NDArray sample_tensor(Shape shape, uint32_t seed, double lo = -1.0, double hi = 1.0,
                             DType dtype = DType::kFloat32) {
  std::vector<double> values(static_cast<size_t>(num_elements(shape)));
  uint32_t state = seed * 2654435761u + 12345u;
  for (double& v : values) {
    state = state * 1664525u + 1013904223u;
    v = lo + (hi - lo) * static_cast<double>(state >> 8) / static_cast<double>(1u << 24);
  }
  return NDArray::from_doubles(std::move(shape), dtype, values);
}

// numpy expression for the tensor's values (in float64) with its shape.
inline std::string np_array(const NDArray& a) {
  std::ostringstream os;
  os.precision(17);
  os << "np.array([";
  for (int64_t i = 0; i < a.numel(); ++i) os << (i ? "," : "") << a.at(i);
  os << "], dtype=np.float64).reshape(" << shape_str(a.shape()) << ")";
  return os.str();
}

// Runs `script` (numpy imported as np) and returns what it prints.
inline std::string python_output(const std::string& script) {
  char path[] = "/tmp/kiln_numpy_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0) << "cannot create a temporary script";
  if (fd < 0) return {};
  close(fd);
  {
    std::ofstream file(path);
    file << "import numpy as np\n" << script << "\n";
  }
  std::string command = std::string("/usr/bin/python3 ") + path;
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    int status = pclose(pipe);
    EXPECT_EQ(status, 0) << "python failed on:\n" << script << "\noutput:\n" << output;
  } else {
    ADD_FAILURE() << "cannot run /usr/bin/python3";
  }
  std::remove(path);
  return output;
}

// Runs `script` and returns every number it prints, whitespace separated.
inline std::vector<double> run_python(const std::string& script) {
  std::vector<double> numbers;
  std::istringstream in(python_output(script));
  std::string token;
  while (in >> token) numbers.push_back(std::strtod(token.c_str(), nullptr));
  return numbers;
}

// Runs `script` and returns the numbers of each printed line, line by line.
inline std::vector<std::vector<double>> run_python_lines(const std::string& script) {
  std::vector<std::vector<double>> lines;
  std::istringstream in(python_output(script));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    lines.emplace_back();
    for (std::string token; words >> token;) lines.back().push_back(std::strtod(token.c_str(), nullptr));
  }
  return lines;
}

// Python statement printing a numpy array's values in row-major order.
inline std::string print_values(const std::string& expr) {
  return "print(' '.join(repr(float(v)) for v in np.asarray(" + expr + ", dtype=np.float64).ravel()))";
}

}  // namespace kiln::testing
