#include "kiln/runtime/npy.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln_npy_XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

// Runs a Python script with the system interpreter (which has NumPy); returns its stdout.
std::string run_python(const TempDir& dir, const std::string& script) {
  std::string script_path = dir.file("script.py");
  std::ofstream(script_path) << "import numpy as np\nimport os\nos.chdir(" << '"' << dir.file("") << '"' << ")\n"
                             << script;
  FILE* pipe = popen(("/usr/bin/python3 " + script_path + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = pclose(pipe);
  fs::remove(script_path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "python failed:\n" << out;
  return out;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const DType kNpyDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8,
                            DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,
                            DType::kUInt16,  DType::kUInt32,  DType::kUInt64,  DType::kBool};

// Six values exactly representable in `dtype` (float16 included), distinct where possible.
std::vector<double> sample_values(DType dtype) {
  if (dtype == DType::kBool) return {0, 1, 1, 0, 0, 1};
  if (is_unsigned_int(dtype)) return {0, 1, 2, 3, 200, 7};
  if (is_signed_int(dtype)) return {0, 1, -2, 3, 100, -7};
  return {0.5, -1.25, 3, 1024, -0.0625, 7};
}

NDArray sample(DType dtype, Shape shape = {2, 3}) { return NDArray::from_doubles(shape, dtype, sample_values(dtype)); }

TEST(Npy, RoundTripsEveryDtypeThroughAFile) {
  TempDir dir;
  for (DType dtype : kNpyDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    NDArray a = sample(dtype);
    std::string path = dir.file("a.npy");
    write_npy(path, a);
    NDArray b = read_npy(path);
    EXPECT_TRUE(b.same_as(a));
    EXPECT_EQ(b.to_doubles(), sample_values(dtype));
  }
}

TEST(Npy, RoundTripsScalarsEmptyAndOneDimensionalArraysInMemory) {
  NDArray scalar = NDArray::scalar(DType::kInt64, -42);
  NDArray back = parse_npy(serialize_npy(scalar), "scalar");
  EXPECT_TRUE(back.shape().empty());
  EXPECT_EQ(back.int_at(0), -42);

  NDArray empty = NDArray::empty({0, 3}, DType::kFloat32);
  EXPECT_TRUE(parse_npy(serialize_npy(empty), "empty").same_as(empty));

  NDArray vec = NDArray::from_doubles({3}, DType::kFloat64, std::vector<double>{1, 2, 3});
  std::string bytes = serialize_npy(vec);
  EXPECT_NE(bytes.find("'shape': (3,)"), std::string::npos) << bytes;
  EXPECT_EQ((bytes.size() - 3 * 8) % 64, 0u) << "data must start 64-byte aligned";
  EXPECT_TRUE(parse_npy(bytes, "vec").same_as(vec));
}

TEST(Npy, ReadsFilesWrittenByNumpy) {
  TempDir dir;
  run_python(dir, R"PY(
a = np.arange(6).reshape(2, 3)
for t in ['float32', 'float16', 'float64', 'int8', 'int16', 'int32', 'int64',
          'uint8', 'uint16', 'uint32', 'uint64']:
    np.save(t + '.npy', (a * 3 - 4 if t[0] != 'u' else a * 3).astype(t))
np.save('bool.npy', np.array([True, False, True]))
np.save('big_endian.npy', np.array([1, -2, 300], dtype='>i4'))
np.save('big_endian_f8.npy', np.array([0.5, -3.25], dtype='>f8'))
np.save('scalar.npy', np.float32(2.5))
np.save('empty.npy', np.zeros((0, 4), dtype=np.int32))
with open('v2.npy', 'wb') as f:
    np.lib.format.write_array(f, np.array([[1.5, 2.5]], dtype=np.float32), version=(2, 0))
with open('v3.npy', 'wb') as f:
    np.lib.format.write_array(f, np.array([7, 8], dtype=np.uint8), version=(3, 0))
)PY");
  for (const char* name : {"float32", "float16", "float64", "int8", "int16", "int32", "int64"}) {
    NDArray a = read_npy(dir.file(std::string(name) + ".npy"));
    EXPECT_EQ(a.dtype(), parse_dtype(name));
    EXPECT_EQ(a.shape(), (Shape{2, 3}));
    EXPECT_EQ(a.to_doubles(), (std::vector<double>{-4, -1, 2, 5, 8, 11})) << name;
  }
  for (const char* name : {"uint8", "uint16", "uint32", "uint64"}) {
    NDArray a = read_npy(dir.file(std::string(name) + ".npy"));
    EXPECT_EQ(a.dtype(), parse_dtype(name));
    EXPECT_EQ(a.to_doubles(), (std::vector<double>{0, 3, 6, 9, 12, 15})) << name;
  }
  NDArray b = read_npy(dir.file("bool.npy"));
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.to_ints(), (std::vector<int64_t>{1, 0, 1}));
  NDArray be = read_npy(dir.file("big_endian.npy"));
  EXPECT_EQ(be.dtype(), DType::kInt32);
  EXPECT_EQ(be.to_ints(), (std::vector<int64_t>{1, -2, 300}));
  EXPECT_EQ(read_npy(dir.file("big_endian_f8.npy")).to_doubles(), (std::vector<double>{0.5, -3.25}));
  NDArray s = read_npy(dir.file("scalar.npy"));
  EXPECT_TRUE(s.shape().empty());
  EXPECT_EQ(s.at(0), 2.5);
  EXPECT_EQ(read_npy(dir.file("empty.npy")).shape(), (Shape{0, 4}));
  NDArray v2 = read_npy(dir.file("v2.npy"));
  EXPECT_EQ(v2.shape(), (Shape{1, 2}));
  EXPECT_EQ(v2.to_doubles(), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(read_npy(dir.file("v3.npy")).to_ints(), (std::vector<int64_t>{7, 8}));
}

TEST(Npy, NumpyReadsOurFiles) {
  TempDir dir;
  std::string expected;
  for (DType dtype : kNpyDTypes) {
    write_npy(dir.file(std::string(dtype_name(dtype)) + ".npy"), sample(dtype));
    expected += cat(dtype_name(dtype), " (2, 3) ", join(sample_values(dtype), " "), "\n");
  }
  write_npy(dir.file("scalar.npy"), NDArray::scalar(DType::kFloat64, -0.75));
  expected += "float64 () -0.75\n";
  std::string out = run_python(dir, R"PY(
for t in ['float32', 'float16', 'float64', 'int8', 'int16', 'int32', 'int64',
          'uint8', 'uint16', 'uint32', 'uint64', 'bool', 'scalar']:
    a = np.load(t + '.npy')
    print(a.dtype, a.shape, ' '.join('%g' % v for v in a.astype(np.float64).ravel()))
)PY");
  EXPECT_EQ(out, expected);
}

TEST(Npz, ReadsArchivesWrittenByNumpy) {
  TempDir dir;
  run_python(dir, R"PY(
x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
w = np.array([[1, -2], [3, -4]], dtype=np.int64)
np.savez('plain.npz', x=x, w=w, flag=np.array(True))
np.savez_compressed('compressed.npz', x=x, w=w, flag=np.array(True))
np.savez('positional.npz', np.array([5, 6], dtype=np.int8))
big = np.tile(np.arange(10, dtype=np.float64), 1000)
np.savez_compressed('big.npz', big=big)
)PY");
  for (const char* name : {"plain.npz", "compressed.npz"}) {
    SCOPED_TRACE(name);
    NamedArrays arrays = read_npz(dir.file(name));
    ASSERT_EQ(arrays.size(), 3u);
    EXPECT_EQ(arrays[0].first, "x");
    EXPECT_EQ(arrays[0].second.shape(), (Shape{2, 3}));
    EXPECT_EQ(arrays[0].second.to_doubles(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1, 1.25}));
    EXPECT_EQ(arrays[1].first, "w");
    EXPECT_EQ(arrays[1].second.dtype(), DType::kInt64);
    EXPECT_EQ(arrays[1].second.to_ints(), (std::vector<int64_t>{1, -2, 3, -4}));
    EXPECT_EQ(arrays[2].first, "flag");
    EXPECT_EQ(arrays[2].second.dtype(), DType::kBool);
    EXPECT_EQ(arrays[2].second.int_at(0), 1);
  }
  NamedArrays positional = read_npz(dir.file("positional.npz"));
  ASSERT_EQ(positional.size(), 1u);
  EXPECT_EQ(positional[0].first, "arr_0");
  EXPECT_EQ(positional[0].second.to_ints(), (std::vector<int64_t>{5, 6}));

  NamedArrays big = read_npz(dir.file("big.npz"));
  ASSERT_EQ(big.size(), 1u);
  ASSERT_EQ(big[0].second.numel(), 10000);
  EXPECT_EQ(big[0].second.at(9999), 9);
  EXPECT_EQ(big[0].second.at(4321), 1);
  EXPECT_LT(fs::file_size(dir.file("big.npz")), 80000u) << "the test wants a really deflated entry";
}

// Python's zipfile writes zip64 extra fields in the central directory and a zip64
// end-of-directory record only above 4 GiB; lowering its limit exercises those paths.
TEST(Npz, ReadsZip64Records) {
  TempDir dir;
  run_python(dir, R"PY(
import zipfile
zipfile.ZIP64_LIMIT = 64
zipfile.ZIP_FILECOUNT_LIMIT = 1
np.savez('zip64.npz', a=np.arange(40, dtype=np.int32), b=np.array([2.5], dtype=np.float32))
with zipfile.ZipFile('zip64.npz') as z:
    assert any(b'\x01\x00' in info.extra for info in z.infolist())
)PY");
  NamedArrays arrays = read_npz(dir.file("zip64.npz"));
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].first, "a");
  EXPECT_EQ(arrays[0].second.numel(), 40);
  EXPECT_EQ(arrays[0].second.int_at(39), 39);
  EXPECT_EQ(arrays[1].second.at(0), 2.5);
}

TEST(Npz, NumpyReadsOurArchives) {
  TempDir dir;
  NamedArrays arrays = {{"conv1.weight", sample(DType::kFloat32)},
                        {"ids", sample(DType::kInt64, {6})},
                        {"mask", sample(DType::kBool, {3, 2})},
                        {"zeros", NDArray::from_doubles({2000}, DType::kFloat64, std::vector<double>(2000, 0.0))}};
  write_npz(dir.file("stored.npz"), arrays);
  write_npz(dir.file("deflated.npz"), arrays, /*compress=*/true);
  EXPECT_LT(fs::file_size(dir.file("deflated.npz")), fs::file_size(dir.file("stored.npz")) - 10000);
  std::string out = run_python(dir, R"PY(
import zipfile
for name in ['stored.npz', 'deflated.npz']:
    with zipfile.ZipFile(name) as z:
        assert z.testzip() is None
        print([i.compress_type for i in z.infolist()])
    with np.load(name) as f:
        for k in f.files:
            a = f[k]
            print(k, a.dtype, a.shape, ' '.join('%g' % v for v in a.astype(np.float64).ravel()[:6]))
)PY");
  std::string listing =
      "conv1.weight float32 (2, 3) 0.5 -1.25 3 1024 -0.0625 7\n"
      "ids int64 (6,) 0 1 -2 3 100 -7\n"
      "mask bool (3, 2) 0 1 1 0 0 1\n"
      "zeros float64 (2000,) 0 0 0 0 0 0\n";
  EXPECT_EQ(out, "[0, 0, 0, 0]\n" + listing + "[8, 8, 8, 8]\n" + listing);
}

TEST(Npz, RoundTripsThroughOurReader) {
  TempDir dir;
  NamedArrays arrays;
  for (DType dtype : kNpyDTypes) arrays.emplace_back(std::string(dtype_name(dtype)), sample(dtype));
  arrays.emplace_back("scalar", NDArray::scalar(DType::kInt32, 9));
  for (bool compress : {false, true}) {
    write_npz(dir.file("all.npz"), arrays, compress);
    NamedArrays back = read_npz(dir.file("all.npz"));
    ASSERT_EQ(back.size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ(back[i].first, arrays[i].first);
      EXPECT_TRUE(back[i].second.same_as(arrays[i].second)) << arrays[i].first;
    }
  }
}

TEST(Npy, TruncatedAndCorruptFilesNameTheFile) {
  TempDir dir;
  std::string good = serialize_npy(sample(DType::kFloat32));
  struct Case {
    const char* name;
    std::string bytes;
    const char* message;
  };
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  std::string bad_dtype = good;
  bad_dtype.replace(bad_dtype.find("<f4"), 3, "<c8");
  std::string bad_header = good;
  bad_header.replace(bad_header.find("'shape'"), 7, "'shapf'");
  std::string bad_version = good;
  bad_version[6] = 9;
  Case cases[] = {
      {"truncated_data.npy", good.substr(0, good.size() - 1), "truncated"},
      {"truncated_header.npy", good.substr(0, 40), "truncated inside the .npy header"},
      {"tiny.npy", good.substr(0, 4), "not a .npy file"},
      {"trailing.npy", good + "xx", "unexpected bytes after the data"},
      {"not_npy.npy", "hello world, this is text", "not a .npy file"},
      {"fortran.npy", fortran, "Fortran-order"},
      {"complex.npy", bad_dtype, "unsupported dtype '<c8'"},
      {"bad_key.npy", bad_header, "unexpected key 'shapf'"},
      {"version.npy", bad_version, "unsupported .npy format version 9"},
  };
  for (const auto& c : cases) {
    std::string path = dir.file(c.name);
    write_bytes(path, c.bytes);
    std::string message = error_of([&] { read_npy(path); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    std::string in_memory = error_of([&] { parse_npy(c.bytes, c.name); });
    EXPECT_NE(in_memory.find(c.message), std::string::npos) << in_memory;
  }
  std::string missing = dir.file("missing.npy");
  std::string message = error_of([&] { read_npy(missing); });
  EXPECT_NE(message.find(missing), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
}

TEST(Npz, TruncatedAndCorruptArchivesNameTheFile) {
  TempDir dir;
  NamedArrays arrays = {{"x", sample(DType::kFloat32)}, {"y", sample(DType::kInt8)}};
  for (bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "deflated" : "stored");
    std::string source = dir.file("source.npz");
    write_npz(source, arrays, compress);
    std::string good = file_bytes(source);
    std::string flipped = good;
    flipped[100] = static_cast<char>(flipped[100] ^ 0x55);  // inside the first entry's data
    std::string cut_directory = good.substr(0, good.size() - 30);
    std::string cut_end = good.substr(0, good.size() - 5);
    for (const auto& [name, bytes] : {std::pair{"flipped.npz", flipped}, std::pair{"cut_directory.npz", cut_directory},
                                      std::pair{"cut_end.npz", cut_end}, std::pair{"empty.npz", std::string()}}) {
      std::string path = dir.file(name);
      write_bytes(path, bytes);
      std::string message = error_of([&] { read_npz(path); });
      EXPECT_NE(message.find(path), std::string::npos) << name << ": " << message;
    }
    std::string message = error_of([&] { read_npz(dir.file("flipped.npz")); });
    EXPECT_TRUE(message.find("CRC-32") != std::string::npos || message.find("decompress") != std::string::npos ||
                message.find("x.npy") != std::string::npos)
        << message;
  }
  // A valid archive whose entry is not a .npy file: the error names the archive and entry.
  std::string path = dir.file("bad_entry.npz");
  run_python(dir,
             "import zipfile\nwith zipfile.ZipFile('bad_entry.npz', 'w') as z:\n    z.writestr('w.npy', 'oops')\n");
  std::string message = error_of([&] { read_npz(path); });
  EXPECT_NE(message.find(path + ":w.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("not a .npy file"), std::string::npos) << message;
}

TEST(Npy, FailedWritesLeaveNothingBehind) {
  TempDir dir;
  std::string existing = dir.file("out.npy");
  write_npy(existing, sample(DType::kInt32));
  std::string before = file_bytes(existing);

  NDArray bf16 = NDArray::empty({2}, DType::kBFloat16);
  std::string message = error_of([&] { write_npy(existing, bf16); });
  EXPECT_NE(message.find("bfloat16"), std::string::npos) << message;
  EXPECT_NE(message.find(existing), std::string::npos) << message;
  EXPECT_EQ(file_bytes(existing), before) << "the old file must survive a failed write";

  message = error_of([&] { write_npz(dir.file("w.npz"), {{"a", sample(DType::kFloat32)}, {"a", bf16}}); });
  EXPECT_NE(message.find("duplicate array name 'a'"), std::string::npos) << message;
  message = error_of([&] { write_npz(dir.file("w.npz"), {{"a", sample(DType::kFloat32)}, {"b", bf16}}); });
  EXPECT_NE(message.find("bfloat16"), std::string::npos) << message;

  std::string no_dir = dir.file("no/such/dir/x.npy");
  message = error_of([&] { write_npy(no_dir, sample(DType::kFloat32)); });
  EXPECT_NE(message.find(no_dir), std::string::npos) << message;

  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.npy"}) << "no temporary or partial files";
}

TEST(Npy, SanitizesTensorNamesForFiles) {
  EXPECT_EQ(sanitize_tensor_name("input:0"), "input_0");
  EXPECT_EQ(sanitize_tensor_name("a/b c\\d"), "a_b_c_d");
  EXPECT_EQ(sanitize_tensor_name("conv1.weight-v2_x"), "conv1.weight-v2_x");
  EXPECT_EQ(sanitize_tensor_name("\xc3\xa9t\xc3\xa9"), "__t__");
}

}  // namespace
}  // namespace kiln
