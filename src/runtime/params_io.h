// params.bin, the weights of an artifact. Little-endian: magic "KILNPRM1", uint64 count,
// then per tensor: uint32 name length, the name's bytes, uint64 byte length of one .npy
// record and the .npy bytes (runtime/npy.h). Names are the graph's "null" node names.
#pragma once

#include <string>
#include <string_view>

#include "kiln/runtime/npy.h"

namespace kiln {

// Throws kiln::Error naming the file on a bad magic, a truncated record, a malformed
// tensor or a name given twice.
NamedArrays read_params(const std::string& path);
// Written all or nothing (a failed write leaves no file behind).
void write_params(const std::string& path, const NamedArrays& params);

// The same encoding in memory; `what` names the source in error messages.
NamedArrays parse_params(std::string_view bytes, const std::string& what);
std::string serialize_params(const NamedArrays& params);

}  // namespace kiln
