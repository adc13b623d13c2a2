// Whole-file reads (kiln/support/file.h): a mapped regular file, the read fallback for files
// that cannot be mapped, and errors that name the file.
#include "kiln/support/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "frontend/onnx_test_util.h"
#include "kiln/support/error.h"

namespace kiln::testing {
namespace {

TEST(ReadToEnd, AppendsAPipesBytesUntilItCloses) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "ab", 2), 2);
  ::close(fds[1]);
  std::string out = "start:";
  EXPECT_TRUE(read_to_end(fds[0], &out));
  EXPECT_EQ(out, "start:ab");
  ::close(fds[0]);
}

TEST(ReadToEnd, ReadsPastOneBufferAndReportsAReadError) {
  TempDir dir;
  const std::string path = dir.file("big");
  const std::string bytes(200000, 'x');  // three reads' worth
  kiln::write_file(path, bytes);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string out;
  EXPECT_TRUE(read_to_end(fd, &out));
  EXPECT_EQ(out, bytes);
  ::close(fd);
  EXPECT_FALSE(read_to_end(fd, &out)) << "a closed descriptor";
  EXPECT_EQ(errno, EBADF);
}

TEST(FileBytes, MapsARegularFile) {
  TempDir dir;
  std::string bytes(100000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 % 251);
  kiln::write_file(dir.file("model.onnx"), bytes);
  const FileBytes file(dir.file("model.onnx"));
  EXPECT_EQ(file.view(), bytes);
}

TEST(FileBytes, ReadsAnEmptyFileAndOneWithoutAKnownSize) {
  TempDir dir;
  kiln::write_file(dir.file("empty"), "");
  EXPECT_TRUE(FileBytes(dir.file("empty")).view().empty());
  // /proc files report size 0 and cannot be mapped whole: their bytes come from reads.
  EXPECT_NE(FileBytes("/proc/self/status").view().find("Name:"), std::string_view::npos);
}

TEST(FileBytes, MovesKeepTheBytes) {
  TempDir dir;
  kiln::write_file(dir.file("a"), "first");
  kiln::write_file(dir.file("b"), "second");
  FileBytes a(dir.file("a"));
  FileBytes b(dir.file("b"));
  b = std::move(a);
  EXPECT_EQ(b.view(), "first");
  FileBytes c(std::move(b));
  EXPECT_EQ(c.view(), "first");
}

TEST(FileBytes, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  try {
    FileBytes missing(dir.file("absent.onnx"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), dir.file("absent.onnx"));
    EXPECT_TRUE(contains(e.what(), "cannot open file")) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
