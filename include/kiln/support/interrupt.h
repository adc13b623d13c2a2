// Interrupted work leaves nothing behind. Code that writes something not yet complete (a
// staging folder, a cache entry being built) holds a PartialPath for it, and code that runs a
// child process (the C compiler) runs it through run_process, which registers the child. A
// program that installs the interrupt cleanup (the kiln CLI does, first thing in main) then
// answers SIGINT, SIGTERM and SIGHUP by killing those children with all they started, waiting
// until all of it is gone, removing those paths and exiting with 128 + the signal. SIGKILL
// cannot be answered; writers name their partial paths after their process id so that a later
// run removes those of dead processes (remove_partials_of_dead_processes).
#pragma once

#include <string>

namespace kiln {

// A file or folder being written: removed when this object dies (an exception, an early return)
// unless it was renamed into place meanwhile, and on interruption while this object lives.
class PartialPath {
 public:
  explicit PartialPath(std::string path);
  ~PartialPath();
  PartialPath(const PartialPath&) = delete;
  PartialPath& operator=(const PartialPath&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Blocks the three signals in the calling thread (and so in every thread it creates later) and
// starts a thread that waits for them. Call before any other thread is created; once per process.
void install_interrupt_cleanup();

// A name for a partial file or folder beside its final name `final_path`:
// DIR/.NAME.partial-PID-N, unique within this process and across processes.
std::string partial_name_for(const std::string& final_path);
// Removes the partial files and folders in `dir` (named by partial_name_for) whose process no
// longer runs: what a killed run left.
void remove_partials_of_dead_processes(const std::string& dir);

struct ProcessResult {
  int status = 0;      // exit status; -1 when killed by a signal or not started
  std::string output;  // stdout and stderr together
};
// Runs `command` with /bin/sh -c, collecting its output. The child does not inherit the
// blocked signals, and is killed if this process is interrupted meanwhile.
ProcessResult run_process(const std::string& command);

}  // namespace kiln
