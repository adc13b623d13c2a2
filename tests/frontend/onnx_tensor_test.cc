// TensorProto -> NDArray: raw data, typed fields, sizes, unsupported types, tensor files.
#include <gtest/gtest.h>

#include "frontend/onnx/tensor_proto.h"
#include "frontend/onnx_test_util.h"

namespace kiln::testing {
namespace {

using frontend::ndarray_from_tensor_proto;

onnx::TensorProto proto(int type, const std::vector<int64_t>& dims, const std::string& name = "t") {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

TEST(OnnxTensorProto, TypedFields) {
  onnx::TensorProto f = proto(onnx::TensorProto::FLOAT, {2});
  f.add_float_data(1.5f);
  f.add_float_data(-2);
  NDArray a = ndarray_from_tensor_proto(f, "");
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  expect_close(a, {1.5, -2});

  onnx::TensorProto i8 = proto(onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127}) i8.add_int32_data(v);
  EXPECT_EQ(ndarray_from_tensor_proto(i8, "").to_ints(), (std::vector<int64_t>{-128, 0, 127}));

  onnx::TensorProto b = proto(onnx::TensorProto::BOOL, {2});
  b.add_int32_data(1);
  b.add_int32_data(0);
  NDArray bools = ndarray_from_tensor_proto(b, "");
  EXPECT_EQ(bools.dtype(), DType::kBool);
  EXPECT_EQ(bools.to_ints(), (std::vector<int64_t>{1, 0}));

  onnx::TensorProto h = proto(onnx::TensorProto::FLOAT16, {1});
  h.add_int32_data(0x3C00);  // 1.0 in IEEE half
  expect_close(ndarray_from_tensor_proto(h, ""), {1.0});

  onnx::TensorProto i64 = proto(onnx::TensorProto::INT64, {2, 1});
  i64.add_int64_data(int64_t{1} << 40);
  i64.add_int64_data(-3);
  NDArray big = ndarray_from_tensor_proto(i64, "");
  EXPECT_EQ(big.shape(), (Shape{2, 1}));
  EXPECT_EQ(big.to_ints(), (std::vector<int64_t>{int64_t{1} << 40, -3}));

  onnx::TensorProto u32 = proto(onnx::TensorProto::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  EXPECT_EQ(ndarray_from_tensor_proto(u32, "").int_at(0), 4000000000);
}

TEST(OnnxTensorProto, RawDataAndBoolNormalisation) {
  onnx::TensorProto d = proto(onnx::TensorProto::DOUBLE, {2});
  double values[2] = {0.25, -8};
  d.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  expect_close(ndarray_from_tensor_proto(d, ""), {0.25, -8});

  onnx::TensorProto b = proto(onnx::TensorProto::BOOL, {3});
  b.set_raw_data(std::string("\x00\x02\x01", 3));
  NDArray bools = ndarray_from_tensor_proto(b, "");
  EXPECT_EQ(bools.data<bool>()[1], true);  // any non-zero byte is true
  EXPECT_EQ(bools.to_ints(), (std::vector<int64_t>{0, 1, 1}));

  onnx::TensorProto empty = proto(onnx::TensorProto::FLOAT, {0, 3});
  EXPECT_EQ(ndarray_from_tensor_proto(empty, "").shape(), (Shape{0, 3}));
}

TEST(OnnxTensorProto, MalformedTensorsAreErrorsNamingThem) {
  onnx::TensorProto short_raw = proto(onnx::TensorProto::FLOAT, {2, 2}, "w");
  short_raw.set_raw_data(std::string(12, '\0'));
  EXPECT_TRUE(contains(error_of([&] { ndarray_from_tensor_proto(short_raw, ""); }),
                       "tensor 'w' of shape (2, 2) has the wrong amount of data (expected 16 bytes, found 12 bytes)"));
  onnx::TensorProto few = proto(onnx::TensorProto::INT64, {3}, "idx");
  few.add_int64_data(1);
  EXPECT_TRUE(contains(error_of([&] { ndarray_from_tensor_proto(few, ""); }),
                       "tensor 'idx' of shape (3) has the wrong number of values in int64_data (expected 3, found 1)"));
  onnx::TensorProto none = proto(onnx::TensorProto::FLOAT, {2}, "nodata");
  EXPECT_TRUE(
      contains(error_of([&] { ndarray_from_tensor_proto(none, ""); }), "tensor 'nodata' of shape (2) holds no data"));
  onnx::TensorProto strings = proto(onnx::TensorProto::STRING, {1}, "s");
  strings.add_string_data("hi");
  EXPECT_TRUE(contains(error_of([&] { ndarray_from_tensor_proto(strings, ""); }),
                       "tensor 's' has element type string, which kiln does not support"));
  onnx::TensorProto negative = proto(onnx::TensorProto::FLOAT, {-1}, "neg");
  EXPECT_TRUE(
      contains(error_of([&] { ndarray_from_tensor_proto(negative, ""); }), "tensor 'neg' has a negative dimension -1"));
  onnx::TensorProto external = proto(onnx::TensorProto::FLOAT, {1}, "ext");
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = external.add_external_data();
  loc->set_key("location");
  loc->set_value("w.bin");
  EXPECT_TRUE(contains(error_of([&] { ndarray_from_tensor_proto(external, ""); }),
                       "was not loaded from a file, so there is no directory to find it in"));
}

TEST(OnnxTensorProto, TensorFiles) {
  TempDir dir;
  onnx::TensorProto t = proto(onnx::TensorProto::INT32, {2});
  t.add_int32_data(4);
  t.add_int32_data(-5);
  write_file(dir.file("input_0.pb"), t.SerializeAsString());
  NDArray a = read_onnx_tensor_file(dir.file("input_0.pb"));
  EXPECT_EQ(a.dtype(), DType::kInt32);
  EXPECT_EQ(a.to_ints(), (std::vector<int64_t>{4, -5}));
  write_file(dir.file("bad.pb"), "\xff\xff\xff");
  EXPECT_TRUE(contains(error_of([&] { read_onnx_tensor_file(dir.file("bad.pb")); }),
                       dir.file("bad.pb") + ": not a serialized onnx.TensorProto"));
}

}  // namespace
}  // namespace kiln::testing
