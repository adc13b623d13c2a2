// Unswitching of vectorised loops: a select whose condition does not change inside a vectorised
// loop becomes an if around two copies of the loop, each with that select resolved. The C
// compiler then sees straight-line loads it can vectorise: concatenate picks its input per channel
// block with a chain of such selects, and GCC unswitches a few of them itself but gives up on
// longer chains (DenseNet's 8- to 15-input concatenations ran scalar).
#pragma once

#include "kiln/tir/stmt.h"

namespace kiln::tir {

// At most `max_copies` copies of each vectorised loop are made; conditions that read a buffer the
// loop writes, or call an extern function, are left alone.
Stmt unswitch_vector_loops(const Stmt& s, int max_copies = 32);
PrimFunc unswitch_vector_loops(const PrimFunc& f, int max_copies = 32);

}  // namespace kiln::tir
