// ShapeVariants: the variants.json schema, keys of input shapes, and the errors of a folder
// that lacks the variant asked for. (Compiling and running variants: tests/cli/dynamic_shapes.sh.)
#include "kiln/runtime/shape_variants.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "kiln/support/error.h"
#include "kiln/support/file.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct VariantsFolder {
  VariantsFolder() {
    dir = fs::temp_directory_path() / ("kiln_variants_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    write_file((dir / "variants.json").string(),
               ShapeVariants::to_json({{"x", {-1, 3, 8}, DType::kFloat32}, {"n", {}, DType::kInt64}},
                                      {{"y", {-1, 10}, DType::kFloat32}}, {"-O", "2"}));
  }
  ~VariantsFolder() { fs::remove_all(dir); }
  fs::path dir;
};

TEST(ShapeVariants, JsonRoundTrip) {
  VariantsFolder folder;
  ASSERT_TRUE(ShapeVariants::is_variants_dir(folder.dir.string()));
  ShapeVariants v = ShapeVariants::load(folder.dir.string());
  ASSERT_EQ(v.inputs().size(), 2u);
  EXPECT_EQ(v.inputs()[0].name, "x");
  EXPECT_EQ(v.inputs()[0].shape, (Shape{-1, 3, 8}));
  EXPECT_EQ(v.inputs()[1].dtype, DType::kInt64);
  EXPECT_EQ(v.outputs()[0].shape, (Shape{-1, 10}));
  EXPECT_EQ(v.compile_args(), (std::vector<std::string>{"-O", "2"}));
}

TEST(ShapeVariants, KeysNameEachInputsShape) {
  VariantsFolder folder;
  ShapeVariants v = ShapeVariants::load(folder.dir.string());
  EXPECT_EQ(v.key({{4, 3, 8}, {}}), "4x3x8_s");
  EXPECT_EQ(v.variant_dir({{16, 3, 8}, {}}), (folder.dir / "shapes" / "16x3x8_s").string());
  EXPECT_THROW(v.key({{4, 2, 8}, {}}), Error);  // a static dimension differs
  EXPECT_THROW(v.key({{4, 3}, {}}), Error);     // rank
  EXPECT_THROW(v.key({{4, 3, 8}}), Error);      // one input missing
}

TEST(ShapeVariants, MissingVariantListsTheCompiledOnes) {
  VariantsFolder folder;
  fs::create_directories(folder.dir / "shapes" / "1x3x8_s");
  write_file((folder.dir / "shapes" / "1x3x8_s" / "graph.json").string(), "{}");
  ShapeVariants v = ShapeVariants::load(folder.dir.string());
  EXPECT_EQ(v.compiled(), (std::vector<std::string>{"1x3x8_s"}));
  try {
    v.load_variant({{2, 3, 8}, {}});
    ADD_FAILURE() << "loaded a variant that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no variant compiled for input shapes 2x3x8_s (compiled: 1x3x8_s)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShapeVariants, MalformedFileIsAnErrorNamingIt) {
  VariantsFolder folder;
  write_file((folder.dir / "variants.json").string(), R"({"kiln_shape_variants": 1, "inputs": 3})");
  try {
    ShapeVariants::load(folder.dir.string());
    ADD_FAILURE() << "accepted a malformed variants.json";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("variants.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
