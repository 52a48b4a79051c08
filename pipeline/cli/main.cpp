#include "memory/heap_policy.h"
#include "memory/mapped_regions.h"
#include "pipeline/cli/cli.h"

int main(int argc, char** argv) {
  cpufold::limit_heap_growth();
  cpufold::install_sigbus_message();
  return cpufold::run_cli(argc, argv);
}
