// Helpers every test layer shares.
#pragma once

#include <string>

#include "kiln/support/error.h"

namespace kiln {

// The message of the kiln::Error `fn` throws, or "" when it throws none (so a check that the
// message contains some text fails then too).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln
