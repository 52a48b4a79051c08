// One error hierarchy for the whole program, caught once in main with distinct exit codes
// (README's "Exit status"). Every error is one of the kinds below: there is no exit code 1.
#pragma once

#include <stdexcept>
#include <string>

namespace cpufold {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const = 0;
};

// Something the user handed us is wrong: a file, a sequence, an option.
class InputError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 2; }
};

// A parameter file is missing, corrupt, or does not fit the model.
class WeightsError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 3; }
};

// The memory budget cannot hold the run.
class BudgetError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 4; }
};

// A bug in cpufold: a broken invariant, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
  int exit_code() const override { return 5; }
};

}  // namespace cpufold
