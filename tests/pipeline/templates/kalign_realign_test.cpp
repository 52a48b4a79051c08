#include "pipeline/templates/kalign_realign.h"

#include <gtest/gtest.h>

#include "memory/error.h"
#include "pipeline/templates/scratch_directory.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

TEST(KalignRealign, CarriesTheMappingOverAnInsertion) {
  const ScratchDirectory scratch("kalign-test");
  // The mmCIF chain has two residues more (KK) in the middle than the hit's sequence.
  const std::string old_seq = "MQIFVKTLTGKTITLEVEPSDTIENV";
  const std::string new_seq = "MQIFVKTLTGKTKKITLEVEPSDTIENV";
  std::map<int, int> old_mapping;
  for (int i = 0; i < static_cast<int>(old_seq.size()); ++i) old_mapping[i + 5] = i;
  const std::map<int, int> m = realign_with_kalign(old_seq, new_seq, old_mapping, scratch.path());
  ASSERT_EQ(m.size(), old_mapping.size());
  EXPECT_EQ(m.at(5), 0);
  EXPECT_EQ(m.at(5 + 25), 27);  // the last residue, two further along
  for (const auto& [q, t] : m) {
    ASSERT_GE(t, 0) << "query " << q;
    EXPECT_EQ(new_seq[static_cast<std::size_t>(t)], old_seq[static_cast<std::size_t>(q - 5)]);
  }
}

TEST(KalignRealign, RefusesAChainLessThan90PercentIdentical) {
  const ScratchDirectory scratch("kalign-test");
  const std::string old_seq = "MQIFVKTLTGKTITLEVEPSDTIENV";
  const std::string new_seq = "MQAAVKTLAAKTIAAEVEPAATIENV";
  const std::string message = testing::thrown_message<InputError>([&] {
    realign_with_kalign(old_seq, new_seq, {{0, 0}}, scratch.path());
  });
  EXPECT_NE(message.find("90%"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpufold
