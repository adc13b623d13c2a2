// An independent oracle for kernel tests: evaluates a numpy expression with the system
// Python (/usr/bin/python3, which has numpy) and returns its elements as doubles.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace kiln::testing::numpy {

// "np.array([1, 2.5], dtype=np.float32).reshape((2,))"; values print exactly.
inline std::string array(const std::vector<int64_t>& shape, const std::vector<double>& values,
                         const std::string& dtype = "float32") {
  std::ostringstream os;
  os.precision(17);
  os << "np.array([";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "], dtype=np." << dtype << ").reshape((";
  for (int64_t d : shape) os << d << ",";
  os << "))";
  return os.str();
}

// Values of `expr` (anything np.asarray accepts), flattened, converted to float64.
// `setup` may define names (Python statements, one per line) used by expr.
// Fails the current test (and returns {}) when Python fails.
inline std::vector<double> eval(const std::string& expr, const std::string& setup = "") {
  std::string script = "import math\nimport numpy as np\n" + setup + "\nr = np.asarray(" + expr +
                       ")\nprint(' '.join(repr(float(v)) for v in r.astype(np.float64).ravel()))\n";
  if (script.find_first_of("\"\\$`") != std::string::npos) {
    ADD_FAILURE() << "numpy::eval: the script must not contain any of \" \\ $ `";
    return {};
  }
  std::string command = "/usr/bin/python3 -c \"" + script + "\" 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "numpy::eval: cannot start /usr/bin/python3";
    return {};
  }
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  if (pclose(pipe) != 0) {
    ADD_FAILURE() << "numpy::eval failed for " << expr << ":\n" << output;
    return {};
  }
  std::vector<double> values;
  std::istringstream tokens(output);
  std::string token;
  while (tokens >> token) values.push_back(std::strtod(token.c_str(), nullptr));  // strtod reads nan/inf
  return values;
}

}  // namespace kiln::testing::numpy
