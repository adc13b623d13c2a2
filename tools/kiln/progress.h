// A progress line on stderr for compiles that take more than a second: rewritten in place with
// \r when stderr is a terminal, never written otherwise, so logs and pipes stay clean.
#pragma once

#include <string>

namespace kiln::cli {

// `text` replaces the line once a second has passed since the command started
// ($KILN_PROGRESS_DELAY_MS changes the second).
void show_progress(const std::string& text);
// Erases the line, if one was shown (before the command's own output).
void clear_progress();

}  // namespace kiln::cli
