#include "kiln/support/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/strings.h"

extern char** environ;

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t cleanup_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kCleanupSignals) sigaddset(&set, sig);
  return set;
}

// What an interruption must undo: the children running and the paths being written.
struct PendingWork {
  std::mutex mutex;
  std::multiset<std::string> paths;
  std::set<pid_t> children;
};

PendingWork& pending() {
  static PendingWork* work = new PendingWork;  // never destroyed: the waiting thread may outlive main
  return *work;
}

// Waits until no child of this process is left in process group `group`. The process is a
// child subreaper (install_interrupt_cleanup), so the group's grandchildren (cc1, as) become its
// children as their parents die, before those parents can be reaped: the loop ends only when
// the whole group is gone.
void reap_group(pid_t group) {
  while (::waitpid(-group, nullptr, 0) > 0 || errno == EINTR) {
  }
}

// Removes `paths` and checks that they stay gone: the main thread goes on until _exit and may
// still write a compile unit into a partial folder being removed (its rmdir then fails) or
// create one. Bounded: a writer that never stops cannot hold the exit back for long.
void remove_until_gone(const std::multiset<std::string>& paths) {
  using namespace std::chrono_literals;
  int clean_checks = 0;
  for (int round = 0; round < 200 && clean_checks < 2; ++round) {
    bool any_left = false;
    for (const std::string& path : paths) {
      std::error_code ec;
      fs::remove_all(path, ec);
      any_left = any_left || fs::exists(path, ec);
    }
    clean_checks = any_left ? 0 : clean_checks + 1;
    if (clean_checks < 2) std::this_thread::sleep_for(5ms);
  }
}

[[noreturn]] void clean_up_and_exit(int sig) {
  PendingWork& work = pending();
  std::lock_guard lock(work.mutex);                           // held until _exit: nothing new is registered meanwhile
  for (pid_t child : work.children) ::kill(-child, SIGKILL);  // its process group: sh, cc, cc1, as
  for (pid_t child : work.children) reap_group(child);
  remove_until_gone(work.paths);
  ::_exit(128 + sig);
}

void wait_for_signals() {
  const sigset_t set = cleanup_signal_set();
  int sig = 0;
  while (::sigwait(&set, &sig) != 0) {
  }
  clean_up_and_exit(sig);
}

bool process_runs(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Starts /bin/sh -c `command` with stdout and stderr on a pipe; the child's signal mask is empty.
pid_t spawn_shell(const std::string& command, int* read_end) {
  int fds[2];
  // Close-on-exec: a child spawned by another thread at the same time must not hold this
  // pipe's write end open (the reader would wait for that child too).
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(cat("cannot create a pipe to run: ", command));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, which an interruption kills whole
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  int error = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    throw Error(cat("cannot run: ", command));
  }
  *read_end = fds[0];
  return pid;
}

// A shell child registered for the interruption's kill. It is started under the registry's
// lock: a signal handled between the start and the registration would miss it and leave it
// running (in its own process group, so the terminal's signal does not reach it either).
class RunningChild {
 public:
  explicit RunningChild(const std::string& command) {
    std::lock_guard lock(pending().mutex);
    pid_ = spawn_shell(command, &read_end_);
    pending().children.insert(pid_);
  }
  ~RunningChild() {
    std::lock_guard lock(pending().mutex);
    pending().children.erase(pid_);
  }
  RunningChild(const RunningChild&) = delete;
  RunningChild& operator=(const RunningChild&) = delete;

  pid_t pid() const { return pid_; }
  int read_end() const { return read_end_; }

 private:
  pid_t pid_ = 0;
  int read_end_ = -1;
};

}  // namespace

PartialPath::PartialPath(std::string path) : path_(std::move(path)) {
  std::lock_guard lock(pending().mutex);
  pending().paths.insert(path_);
}

PartialPath::~PartialPath() {
  std::error_code ec;
  fs::remove_all(path_, ec);  // nothing left to remove once renamed into place
  std::lock_guard lock(pending().mutex);
  pending().paths.erase(pending().paths.find(path_));
}

void install_interrupt_cleanup() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // see reap_group
  const sigset_t set = cleanup_signal_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(wait_for_signals).detach();
}

std::string partial_name_for(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  fs::path path(final_path);
  return (path.parent_path() / cat(".", path.filename().string(), ".partial-", ::getpid(), "-", counter++)).string();
}

void remove_partials_of_dead_processes(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t mark = name.rfind(".partial-");
    if (name.empty() || name[0] != '.' || mark == std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atoll(name.c_str() + mark + std::string_view(".partial-").size()));
    std::error_code remove_ec;
    if (pid > 0 && !process_runs(pid)) fs::remove_all(entry.path(), remove_ec);
  }
}

ProcessResult run_process(const std::string& command) {
  ProcessResult result;
  const RunningChild child(command);
  read_to_end(child.read_end(), &result.output);  // a read error ends the output, as its end does
  ::close(child.read_end());
  int status = 0;
  while (::waitpid(child.pid(), &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kiln
