#include "pipeline/cli/cli.h"

int main(int argc, char** argv) {
  return cpufold::run_cli(argc, argv);
}
