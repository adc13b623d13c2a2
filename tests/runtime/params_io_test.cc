#include "runtime/params_io.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "runtime/file_io.h"
#include "runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::TempDir;

NamedArrays sample_params() {
  return {{"conv1.weight", NDArray::from_vector<float>({2, 3}, {0.5f, -1.25f, 3.f, 1024.f, -0.0625f, 7.f})},
          {"ids", NDArray::from_vector<int64_t>({4}, {1, -2, 3, 1LL << 40})},
          {"flag", NDArray::scalar(DType::kBool, 1)},
          {"empty", NDArray::empty({0, 3}, DType::kFloat16)}};
}

TEST(ParamsIO, RoundTripsThroughAFile) {
  TempDir dir;
  const NamedArrays params = sample_params();
  write_params(dir.file("params.bin"), params);
  const NamedArrays back = read_params(dir.file("params.bin"));
  ASSERT_EQ(back.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(back[i].first, params[i].first);
    EXPECT_TRUE(back[i].second.same_as(params[i].second)) << params[i].first;
  }
}

TEST(ParamsIO, LayoutIsMagicCountThenNamedNpyRecords) {
  const std::string bytes = serialize_params({{"w", NDArray::from_vector<float>({2}, {1.f, 2.f})}});
  ASSERT_GE(bytes.size(), 8u + 8 + 4 + 1 + 8);
  EXPECT_EQ(bytes.substr(0, 8), "KILNPRM1");
  uint64_t count;
  std::memcpy(&count, bytes.data() + 8, 8);
  EXPECT_EQ(count, 1u);
  uint32_t name_length;
  std::memcpy(&name_length, bytes.data() + 16, 4);
  EXPECT_EQ(name_length, 1u);
  EXPECT_EQ(bytes[20], 'w');
  uint64_t npy_length;
  std::memcpy(&npy_length, bytes.data() + 21, 8);
  EXPECT_EQ(npy_length, bytes.size() - 29);
  EXPECT_EQ(bytes.substr(29, 6), "\x93NUMPY");
  float last;
  std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
  EXPECT_EQ(last, 2.f);
}

TEST(ParamsIO, EmptyParamsRoundTrip) { EXPECT_TRUE(parse_params(serialize_params({}), "mem").empty()); }

TEST(ParamsIO, RejectsBadMagic) {
  EXPECT_NE(error_of([] { parse_params("NOTPARMS\0\0\0\0\0\0\0\0", "p.bin"); }).find("p.bin: not a kiln params file"),
            std::string::npos);
}

TEST(ParamsIO, RejectsEveryTruncation) {
  const std::string bytes = serialize_params(sample_params());
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    const std::string message = error_of([&] { parse_params(std::string_view(bytes).substr(0, cut), "p.bin"); });
    EXPECT_NE(message.find("p.bin"), std::string::npos) << "cut at " << cut << ": " << message;
  }
}

TEST(ParamsIO, RejectsTrailingBytesAndDuplicates) {
  std::string bytes = serialize_params({{"a", NDArray::scalar(DType::kFloat32, 1)}});
  EXPECT_NE(error_of([&] { parse_params(bytes + "x", "p.bin"); }).find("1 unexpected bytes"), std::string::npos);
  EXPECT_NE(
      error_of([] {
        serialize_params({{"a", NDArray::scalar(DType::kFloat32, 1)}, {"a", NDArray::scalar(DType::kFloat32, 2)}});
      }).find("'a' given twice"),
      std::string::npos);
}

TEST(ParamsIO, RejectsAHugeCount) {
  std::string bytes = "KILNPRM1";
  const uint64_t count = uint64_t{1} << 60;
  bytes.append(reinterpret_cast<const char*>(&count), 8);
  EXPECT_NE(error_of([&] { parse_params(bytes, "p.bin"); }).find("claims"), std::string::npos);
}

TEST(ParamsIO, MissingFileIsNamed) {
  TempDir dir;
  EXPECT_NE(error_of([&] { read_params(dir.file("nope.bin")); }).find("nope.bin"), std::string::npos);
}

}  // namespace
}  // namespace kiln
