// kgate-native: the native runner. Speaks the worker protocol (docs/protocol.md) on its
// original stdin/stdout; see docs/runner.md for the process model.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "core/log.h"
#include "native/runner.h"

int main() {
  // Stdout discipline first: the protocol gets a private copy of the real stdout, and fd 1
  // becomes stderr, so a candidate's printf (or a library's) can never corrupt a
  // response. Stdin likewise: requests come from a private copy, candidates read /dev/null.
  int proto_out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  int proto_in = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  if (proto_out < 0 || proto_in < 0 || ::dup2(2, 1) < 0) {
    std::perror("kgate-native: setting up the protocol descriptors");
    return kgate::native::kRunnerExitIoError;
  }
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) {
    ::dup2(devnull, 0);
    ::close(devnull);
  }
  // A closed response pipe is an error return from write(), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  kgate::log::configure(kgate::log::detect(false, false));
  try {
    kgate::native::Runner runner;
    int rc = kgate::native::serve(runner, proto_in, proto_out);
    std::fflush(stdout);
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kgate-native: %s\n", e.what());
    return kgate::native::kRunnerExitIoError;
  }
}
