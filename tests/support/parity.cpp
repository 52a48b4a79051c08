#include "tests/support/parity.h"

#include <cmath>
#include <iostream>
#include <sstream>

#include "memory/tensor_copy.h"
#include "tests/support/test_support.h"

namespace cpufold::testing {

namespace {

// The elementwise comparison behind both tolerance forms: element i may differ by allowed(i).
template <typename Allowed>
::testing::AssertionResult compare(const std::string& what, const Tensor& ours,
                                   const std::vector<float>& ref, const Shape& ref_shape,
                                   Allowed&& allowed, const std::string& rule) {
  if (!(ours.shape() == ref_shape)) {
    return ::testing::AssertionFailure() << what << ": shape " << ours.shape().str()
                                         << " but the reference has " << ref_shape.str();
  }
  std::vector<float> mine(static_cast<std::size_t>(ours.numel()));
  convert_tensor(ours, Tensor(mine.data(), DType::f32, ours.shape()));
  double worst_excess = -INFINITY, max_abs = 0, sum_abs = 0;
  std::size_t worst = 0, failures = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const double d = std::fabs(static_cast<double>(mine[i]) - ref[i]);
    const double excess = std::isnan(d) ? INFINITY : d - allowed(i);
    if (excess > 0) ++failures;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
    max_abs = std::max(max_abs, std::isnan(d) ? INFINITY : d);
    sum_abs += d;
  }
  std::ostringstream idx;
  {
    std::size_t rem = worst;
    std::vector<std::int64_t> index(static_cast<std::size_t>(ref_shape.rank()));
    for (int a = ref_shape.rank() - 1; a >= 0; --a) {
      index[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(rem % ref_shape[a]);
      rem /= static_cast<std::size_t>(ref_shape[a]);
    }
    idx << '(';
    for (std::size_t a = 0; a < index.size(); ++a) idx << (a ? ", " : "") << index[a];
    idx << ')';
  }
  std::ostringstream msg;
  msg << what << " " << ref_shape.str() << ": max|Δ| " << max_abs << ", mean|Δ| "
      << (mine.empty() ? 0.0 : sum_abs / static_cast<double>(mine.size()));
  if (!mine.empty()) {
    msg << ", worst (nearest its bound) at " << idx.str() << " ours " << mine[worst] << " ref "
        << ref[worst] << " allowed " << allowed(worst);
  }
  if (failures == 0) return ::testing::AssertionSuccess() << msg.str();
  return ::testing::AssertionFailure()
         << msg.str() << " (" << failures << " elements exceed " << rule << ")";
}

}  // namespace

::testing::AssertionResult matches_reference(const std::string& what, const Tensor& ours,
                                             const std::vector<float>& ref, const Shape& ref_shape,
                                             Tolerance tol) {
  std::ostringstream rule;
  rule << tol.atol << " + " << tol.rtol << "·|ref|";
  return compare(
      what, ours, ref, ref_shape,
      [&](std::size_t i) { return tol.atol + tol.rtol * std::fabs(static_cast<double>(ref[i])); },
      rule.str());
}

double normalized_angle_allowed(Tolerance tol, double ref, double ref_norm) {
  const double fixed = tol.atol + tol.rtol * std::fabs(ref);
  if (!(ref_norm > 0)) return INFINITY;  // u = 0: the direction is undefined
  return std::max(fixed, (tol.atol + tol.rtol * ref_norm) / ref_norm);
}

::testing::AssertionResult normalized_angles_match_reference(
    const std::string& what, const Tensor& ours, const std::vector<float>& ref,
    const std::vector<float>& ref_unnormalized, const Shape& ref_shape, Tolerance tol) {
  if (ref_shape.rank() == 0 || ref_shape[ref_shape.rank() - 1] != 2 ||
      ref_unnormalized.size() != ref.size()) {
    return ::testing::AssertionFailure()
           << what << ": angles must be [..., 2] (sin, cos) pairs with as many unnormalised";
  }
  std::ostringstream rule;
  rule << "max(" << tol.atol << " + " << tol.rtol << "·|ref|, (" << tol.atol << " + " << tol.rtol
       << "·|u|) / |u|)";
  return compare(
      what, ours, ref, ref_shape,
      [&](std::size_t i) {
        const std::size_t pair = i & ~std::size_t{1};
        const double norm = std::hypot(static_cast<double>(ref_unnormalized[pair]),
                                       static_cast<double>(ref_unnormalized[pair + 1]));
        return normalized_angle_allowed(tol, ref[i], norm);
      },
      rule.str());
}

::testing::AssertionResult normalized_angles_match_reference(const Hdf5TensorReader& file,
                                                             const std::string& name,
                                                             const std::string& unnormalized_name,
                                                             const Tensor& ours, Tolerance tol) {
  return normalized_angles_match_reference(name, ours, file.read_f32(name),
                                           file.read_f32(unnormalized_name), file.shape(name), tol);
}

::testing::AssertionResult matches_reference(const Hdf5TensorReader& file, const std::string& name,
                                             const Tensor& ours, Tolerance tol) {
  return matches_reference(name, ours, file.read_f32(name), file.shape(name), tol);
}

void expect_matches(const Hdf5TensorReader& file, const std::string& name, const Tensor& ours,
                    Tolerance tol) {
  const ::testing::AssertionResult r = matches_reference(file, name, ours, tol);
  if (r) std::cout << "[ parity   ] " << r.message() << "\n";
  EXPECT_TRUE(r);
}

OwnedTensor::OwnedTensor(const Hdf5TensorReader& file, const std::string& name) {
  const Shape shape = file.shape(name);
  data.resize(static_cast<std::size_t>(shape.numel()));
  view = Tensor(data.data(), DType::f32, shape);
  file.read(name, view);
}

OwnedTensor::OwnedTensor(const Shape& shape, float fill)
    : data(static_cast<std::size_t>(shape.numel()), fill), view(data.data(), DType::f32, shape) {}

std::filesystem::path tiny_reference(const std::string& file) {
  return test_data_dir() / "reference" / file;
}

std::filesystem::path tiny_params(const std::string& preset) {
  return test_data_dir() / "params" / ("params_" + preset + ".npz");
}

std::filesystem::path full_width_reference(const std::string& file) {
  return require_reference_file(std::filesystem::path("full_width") / file);
}

std::filesystem::path full_width_params(const std::string& preset) {
  return require_reference_file(std::filesystem::path("full_width/params") /
                                ("params_" + preset + ".npz"));
}

}  // namespace cpufold::testing
