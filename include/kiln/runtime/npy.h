// NumPy tensor files: .npy (one array) and .npz (a zip of .npy files), the format of
// `kiln run --inputs/--outputs` and of weight archives. Little- and big-endian numeric
// dtypes and bool are read; C order only. Every problem is a kiln::Error naming the file.
// Writes go to a temporary file in the target's directory that is renamed into place,
// so a failed write never leaves a half-written file behind.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/runtime/ndarray.h"

namespace kiln {

NDArray read_npy(const std::string& path);
void write_npy(const std::string& path, const NDArray& array);

// The .npy encoding in memory; `what` names the source in error messages.
NDArray parse_npy(std::string_view bytes, const std::string& what);
std::string serialize_npy(const NDArray& array);
// The .npy header alone: serialize_npy is this followed by the array's raw bytes.
std::string npy_header(const NDArray& array);

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

// Entries in archive order; keys without the ".npy" suffix (as np.load gives them).
NamedArrays read_npz(const std::string& path);
// Stored entries, or deflated ones when `compress` (like np.savez / np.savez_compressed).
void write_npz(const std::string& path, const NamedArrays& arrays, bool compress = false);

// A tensor name made safe as a file name: every character outside [A-Za-z0-9._-]
// becomes '_' (the convention of `kiln run` input and output files).
std::string sanitize_tensor_name(std::string_view name);

}  // namespace kiln
