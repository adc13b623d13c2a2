#include <gtest/gtest.h>

#include "kiln/ir/op.h"
#include "kiln/transform/pass.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  kiln::register_builtin_ops();
  kiln::register_builtin_passes();
  return RUN_ALL_TESTS();
}
