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

// Values of each expression (anything np.asarray accepts), flattened and converted to
// float64, from one Python process (starting numpy is slow). `setup` may define names
// (Python statements, one per line) that the expressions use. Fails the current test and
// returns {} when Python fails.
inline std::vector<std::vector<double>> eval_many(const std::vector<std::string>& exprs,
                                                  const std::string& setup = "") {
  std::string script = "import math\nimport numpy as np\n" + setup + "\n";
  for (const auto& expr : exprs)
    script += "print(' '.join(repr(float(v)) for v in np.asarray(" + expr + ").astype(np.float64).ravel()))\n";
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
    ADD_FAILURE() << "numpy::eval failed:\n" << script << "\n" << output;
    return {};
  }
  std::vector<std::vector<double>> results;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<double>& values = results.emplace_back();
    std::istringstream tokens(line);
    std::string token;
    while (tokens >> token) values.push_back(std::strtod(token.c_str(), nullptr));  // strtod reads nan/inf
  }
  if (results.size() != exprs.size()) {
    ADD_FAILURE() << "numpy::eval: " << exprs.size() << " expressions but " << results.size() << " lines:\n" << output;
    return {};
  }
  return results;
}

inline std::vector<double> eval(const std::string& expr, const std::string& setup = "") {
  auto results = eval_many({expr}, setup);
  return results.empty() ? std::vector<double>{} : results[0];
}

}  // namespace kiln::testing::numpy
