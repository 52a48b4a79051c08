#include "memory/heap_policy.h"
#include "pipeline/cli/cli.h"

int main(int argc, char** argv) {
  cpufold::limit_heap_growth();
  return cpufold::run_cli(argc, argv);
}
