#include "io/child_process.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace cpufold {

void prepare_forked_child(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(143);  // the parent died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace cpufold
