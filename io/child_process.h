// The first steps of a process cpufold forks to run something else (a worker instance, a search
// program): it must not outlive cpufold, and it starts with no signal blocked.
#pragma once

#include <sys/types.h>

namespace cpufold {

// Call in the child right after fork(), with the parent's pid as it was before the fork: the
// child is sent SIGTERM when the parent dies (and exits at once if the parent is gone already),
// and its signal mask is cleared so the program it runs can be stopped as usual.
void prepare_forked_child(pid_t parent);

}  // namespace cpufold
