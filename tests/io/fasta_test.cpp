#include "io/sequence_input.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include <string>

#include "memory/error.h"
#include "tests/support/test_support.h"

namespace cpufold {
namespace {

using testing::ScratchDir;
using testing::write_file;

std::vector<SequenceRecord> read_text(const ScratchDir& dir, const std::string& text,
                                      std::size_t max_length = kDefaultMaxQueryLength) {
  write_file(dir / "q.fasta", text);
  return read_fasta(dir / "q.fasta", max_length);
}

std::string read_error(const ScratchDir& dir, const std::string& text,
                       std::size_t max_length = kDefaultMaxQueryLength) {
  return testing::thrown_message<InputError>([&] { read_text(dir, text, max_length); });
}

std::string at(const ScratchDir& dir, int line) {
  return (dir / "q.fasta").string() + ":" + std::to_string(line) + ":";
}

TEST(FastaTest, ReadsWrappedMultiRecordFile) {
  ScratchDir dir;
  const auto records = read_text(dir, ">q1 first  query \nMKTA\nYIAK\n\n>q2\nGGS\n");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].header, "q1 first  query");
  EXPECT_EQ(records[0].id, "q1");
  EXPECT_EQ(records[0].description, "first  query");
  EXPECT_EQ(records[0].sequence, "MKTAYIAK");
  EXPECT_EQ(records[0].line, 1u);
  EXPECT_EQ(records[1].id, "q2");
  EXPECT_EQ(records[1].description, "");
  EXPECT_EQ(records[1].sequence, "GGS");
  EXPECT_EQ(records[1].line, 5u);
}

TEST(FastaTest, AcceptsCrlfLowercaseBlankLinesAndStopCodon) {
  ScratchDir dir;
  const auto records = read_text(dir, "\r\n>q1\tdesc\r\nmkta\r\n\r\nyiak*\r\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].id, "q1");
  EXPECT_EQ(records[0].description, "desc");
  EXPECT_EQ(records[0].sequence, "MKTAYIAK");
  EXPECT_EQ(records[0].line, 2u);
}

TEST(FastaTest, AcceptsClassicMacLineEndsAndAByteOrderMark) {
  const auto cr = parse_fasta(">q1 d\rMKTA\rYIAK\r>q2\rGG\r", "q.fasta");
  ASSERT_EQ(cr.size(), 2u);
  EXPECT_EQ(cr[0].header, "q1 d");
  EXPECT_EQ(cr[0].sequence, "MKTAYIAK");
  EXPECT_EQ(cr[1].id, "q2");
  EXPECT_EQ(cr[1].line, 4u);
  const auto bom = parse_fasta("\xEF\xBB\xBF>q1\r\nMKTA\r\n", "q.fasta");
  ASSERT_EQ(bom.size(), 1u);
  EXPECT_EQ(bom[0].id, "q1");
  EXPECT_EQ(bom[0].sequence, "MKTA");
}

TEST(FastaTest, RefusesUtf16File) {
  const std::string message = testing::thrown_message<InputError>(
      [] { parse_fasta(std::string_view("\xFF\xFE>\0q\0", 6), "q.fasta"); });
  EXPECT_NE(message.find("q.fasta:1: the file is UTF-16"), std::string::npos) << message;
}

TEST(FastaTest, RefusesQueryOfOnlyUnknownResidues) {
  ScratchDir dir;
  const std::string message = read_error(dir, ">ok\nMKXA\n>unk\nXXbZUOJx\n");
  EXPECT_NE(message.find(at(dir, 3) + " record 'unk': every residue is unknown"), std::string::npos)
      << message;
  EXPECT_NO_THROW(read_text(dir, ">ok\nMKXA\n>one\nXXXAXX\n"));
}

TEST(FastaTest, KeepsNonStandardLettersForTheFeatureBuilder) {
  ScratchDir dir;
  const auto records = read_text(dir, ">q\nACXBZUOJ\n");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].sequence, "ACXBZUOJ");
}

TEST(FastaTest, RefusesEmptyFile) {
  ScratchDir dir;
  const std::string message = read_error(dir, "");
  EXPECT_NE(message.find(at(dir, 1)), std::string::npos) << message;
  EXPECT_NE(message.find("empty"), std::string::npos) << message;
  EXPECT_NE(read_error(dir, "\n \r\n").find("empty"), std::string::npos);
}

TEST(FastaTest, RefusesTextBeforeFirstHeader) {
  ScratchDir dir;
  const std::string message = read_error(dir, "\nMKTA\n>q\nMKTA\n");
  EXPECT_NE(message.find(at(dir, 2)), std::string::npos) << message;
  EXPECT_NE(message.find("no FASTA header"), std::string::npos) << message;
}

TEST(FastaTest, RefusesHeaderWithEmptySequence) {
  ScratchDir dir;
  const std::string message = read_error(dir, ">q1\nMKTA\n>q2\n\n>q3\nGG\n");
  EXPECT_NE(message.find(at(dir, 3)), std::string::npos) << message;
  EXPECT_NE(message.find("'q2'"), std::string::npos) << message;
  EXPECT_NE(message.find("empty sequence"), std::string::npos) << message;
  EXPECT_NE(read_error(dir, ">q1\n*\n").find("empty sequence"), std::string::npos);
}

TEST(FastaTest, RefusesInvalidLetterNamingItAndTheRecord) {
  ScratchDir dir;
  const std::string message = read_error(dir, ">ok\nMK\n>bad one\nMKT\nA1K\n");
  EXPECT_NE(message.find(at(dir, 3)), std::string::npos) << message;
  EXPECT_NE(message.find("'bad'"), std::string::npos) << message;
  EXPECT_NE(message.find("'1'"), std::string::npos) << message;
  EXPECT_NE(message.find("residue 5"), std::string::npos) << message;
}

TEST(FastaTest, RefusesGapsAndInnerStopInQuery) {
  ScratchDir dir;
  std::string message = read_error(dir, ">q\nMK-TA\n");
  EXPECT_NE(message.find(at(dir, 1)), std::string::npos) << message;
  EXPECT_NE(message.find("'-'"), std::string::npos) << message;
  EXPECT_NE(message.find("gap"), std::string::npos) << message;
  message = read_error(dir, ">q\nMK*TA\n");
  EXPECT_NE(message.find("'*'"), std::string::npos) << message;
}

TEST(FastaTest, RefusesMultimerWithClearMessage) {
  ScratchDir dir;
  const std::string message = read_error(dir, ">complex\nMKTA:GGS\n");
  EXPECT_NE(message.find(at(dir, 1)), std::string::npos) << message;
  EXPECT_NE(message.find("multimer not supported yet"), std::string::npos) << message;
}

TEST(FastaTest, RefusesSequenceLongerThanLimit) {
  ScratchDir dir;
  EXPECT_EQ(read_text(dir, ">q\nMKTAY\n", 5).size(), 1u);
  const std::string message = read_error(dir, ">q\nMKTAYI\n", 5);
  EXPECT_NE(message.find(at(dir, 1)), std::string::npos) << message;
  EXPECT_NE(message.find("6 residues"), std::string::npos) << message;
  EXPECT_NE(message.find("limit of 5"), std::string::npos) << message;
  const std::string too_long = ">q\n" + std::string(kDefaultMaxQueryLength + 1, 'A') + "\n";
  EXPECT_NE(read_error(dir, too_long).find("limit of 10000"), std::string::npos);
}

TEST(FastaTest, QueryErrorLetsBatchSkipOneBadRecord) {
  const auto records =
      parse_fasta(">good\nMKTA\n>multi\nMK:TA\n>bad\nMK9\n>empty\n>good2\nGG\n", "batch.fasta");
  ASSERT_EQ(records.size(), 5u);
  EXPECT_FALSE(query_error(records[0]).has_value());
  ASSERT_TRUE(query_error(records[1]).has_value());
  EXPECT_NE(query_error(records[1])->find("multimer not supported yet"), std::string::npos);
  ASSERT_TRUE(query_error(records[2]).has_value());
  EXPECT_NE(query_error(records[2])->find("'9'"), std::string::npos);
  EXPECT_TRUE(query_error(records[3]).has_value());
  EXPECT_FALSE(query_error(records[4]).has_value());
  EXPECT_TRUE(query_error(records[0], 3).has_value());
}

TEST(FastaTest, RefusesHeaderWithoutName) {
  ScratchDir dir;
  const std::string message = read_error(dir, ">q\nMK\n> \nMKTA\n");
  EXPECT_NE(message.find(at(dir, 3)), std::string::npos) << message;
  EXPECT_NE(message.find("no name"), std::string::npos) << message;
}

TEST(FastaTest, RefusesUnreadableFile) {
  ScratchDir dir;
  const std::string message =
      testing::thrown_message<InputError>([&] { read_fasta(dir / "missing.fasta"); });
  EXPECT_NE(message.find("missing.fasta"), std::string::npos) << message;
}

TEST(InputText, DeviceThatNeverEndsIsRefusedAtOnce) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const std::string message =
        testing::thrown_message<InputError>([&] { read_input_text(device); });
    EXPECT_NE(message.find(device), std::string::npos) << message;
    EXPECT_NE(message.find("not a file"), std::string::npos) << message;
  }
}

TEST(InputText, DirectoryIsRefused) {
  ScratchDir dir;
  EXPECT_NE(testing::thrown_message<InputError>([&] {
              read_input_text(dir.path());
            }).find("is a directory"),
            std::string::npos);
}

struct MaxInputBytes {
  explicit MaxInputBytes(const char* v) { ::setenv("CPUFOLD_MAX_INPUT_BYTES", v, 1); }
  ~MaxInputBytes() { ::unsetenv("CPUFOLD_MAX_INPUT_BYTES"); }
};

TEST(InputText, FileOverTheLimitIsRefusedNamingTheLimitAndHowToRaiseIt) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">q\n" + std::string(3000, 'A') + "\n");
  const MaxInputBytes limit("2K");
  const std::string message =
      testing::thrown_message<InputError>([&] { read_input_text(dir / "q.fasta"); });
  EXPECT_NE(message.find("2.00 KiB"), std::string::npos) << message;
  EXPECT_NE(message.find("CPUFOLD_MAX_INPUT_BYTES"), std::string::npos) << message;
  write_file(dir / "small.fasta", ">q\nMK\n");
  EXPECT_EQ(read_input_text(dir / "small.fasta"), ">q\nMK\n");
}

TEST(InputText, PipeIsReadUpToTheLimit) {
  ScratchDir dir;
  const std::string fifo = (dir / "q.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const MaxInputBytes limit("64K");
  const auto old_handler = std::signal(SIGPIPE, SIG_IGN);  // the writer's end is cut off
  // A writer that never stops, like `yes | cpufold predict /dev/stdin`.
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    const std::string block(4096, 'A');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  });
  const std::string message = testing::thrown_message<InputError>([&] { read_input_text(fifo); });
  writer.join();  // its next write fails with EPIPE once the reader has closed the pipe
  std::signal(SIGPIPE, old_handler);
  EXPECT_NE(message.find("more than 64.0 KiB"), std::string::npos) << message;
}

TEST(InputText, BadLimitSettingIsAnInputError) {
  ScratchDir dir;
  write_file(dir / "q.fasta", ">q\nMK\n");
  const MaxInputBytes limit("lots");
  EXPECT_NE(testing::thrown_message<InputError>([&] {
              read_input_text(dir / "q.fasta");
            }).find("CPUFOLD_MAX_INPUT_BYTES"),
            std::string::npos);
}

TEST(FastaTest, JobNameReplacesUnsafeCharacters) {
  EXPECT_EQ(job_name("sp|P69905|HBA_HUMAN"), "sp_P69905_HBA_HUMAN");
  EXPECT_EQ(job_name("a b/c\\d:e"), "a_b_c_d_e");
  EXPECT_EQ(job_name("Ok-1.2_x"), "Ok-1.2_x");
  EXPECT_EQ(job_name("."), "_");
  EXPECT_EQ(job_name(".."), "__");
  EXPECT_EQ(job_name(".hidden.v2"), "_hidden.v2");
}

}  // namespace
}  // namespace cpufold
