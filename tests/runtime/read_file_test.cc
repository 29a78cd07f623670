// ReadFile (tunefarm/runtime/atomic_file.h): every whole file tunefarm reads, bytes as stored; a file
// that cannot be opened or read is an error naming it and the OS's reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm {
namespace {

TEST(ReadFile, ReturnsEveryByteAndNamesWhatItCannotRead) {
  const std::string dir = ::testing::TempDir(), path = dir + "tunefarm_read_file_" + std::to_string(getpid());
  std::string bytes("a\0b\n", 4);
  for (int i = 0; i < 100000; ++i) bytes += char(i % 251);  // past one read() chunk
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  auto read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, bytes);
  std::remove(path.c_str());

  auto missing = ReadFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "cannot open " + path + ": No such file or directory");
  auto directory = ReadFile(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(), "cannot read " + dir + ": Is a directory");
  EXPECT_EQ(ReadFile(path).value_or("none"), "none");
}

// The streamed form (a records export of any size): what `produce` writes, whole, or nothing when
// it fails -- the old file is kept.
TEST(WriteFileAtomically, StreamsOutputAndKeepsTheOldFileWhenProducingFails) {
  const std::string path = ::testing::TempDir() + "tunefarm_stream_" + std::to_string(getpid());
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  std::string expected;
  Status written = WriteFileAtomically(path, [&](std::ostream& out) {
    for (int i = 0; i < 50000; ++i) {  // 300 KB: past the stream's 64 KiB buffer several times
      const std::string line = std::to_string(i) + "\n";
      out << line;
      expected += line;
    }
    return Status::OK();
  });
  ASSERT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(*ReadFile(path), expected);
  Status failed = WriteFileAtomically(path, [](std::ostream& out) {
    out << std::string(100000, 'x');
    return Status::IOError("cannot list trials: the database went away");
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.message(), "cannot list trials: the database went away");
  EXPECT_EQ(*ReadFile(path), expected);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tunefarm
