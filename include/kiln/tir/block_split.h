// Splitting of vectorised loops at the block of their index arithmetic: a vectorised loop over v
// whose body reads or writes at an offset with v / b and v % b (a blocked layout read from a
// plain one, NCHW{b}c into NHWC) becomes a loop over blocks around a vectorised loop of b lanes,
// so that the C compiler sees contiguous accesses instead of a gather (it does not split the
// loop itself).
#pragma once

#include "kiln/tir/stmt.h"

namespace kiln::tir {

// Only loops with constant bounds from zero, whose memory offsets (flattened and simplified, so
// that [v / W, v % W] of a row-major buffer is v again) divide the loop variable by one divisor b
// that divides the extent, are split; the new loops are simplified.
Stmt split_vector_loops_at_blocks(const Stmt& s);
PrimFunc split_vector_loops_at_blocks(const PrimFunc& f);

}  // namespace kiln::tir
