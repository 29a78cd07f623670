// Files read from paths someone else may control (tunefarm/runtime/safe_file.h, issue 46): a model's
// external data opened beneath its folder with no link followed, `.npy` inputs read header first
// (tunefarm/runtime/npy.h). Each refusal names the file and why, at once: a FIFO never blocks,
// /dev/zero is never read.
#include "tunefarm/runtime/safe_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm {
namespace {

class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_safe_file_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_ + "/model/sub").c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }
  void Write(const std::string& name, const std::string& bytes) {
    ASSERT_TRUE(WriteFileAtomically(dir_ + "/" + name, bytes).ok());
  }
  std::string dir_;
};

// Both resolvers: openat2 (this kernel's) and the component walk a kernel before 5.6, or a container
// whose seccomp profile refuses openat2, gets.
class SafeFileResolvers : public SafeFile, public ::testing::WithParamInterface<BeneathResolver> {};
INSTANTIATE_TEST_SUITE_P(Both, SafeFileResolvers, ::testing::Values(BeneathResolver::kBest, BeneathResolver::kWalk));

TEST_P(SafeFileResolvers, OpenBeneathFollowsNoLinkAndStaysInsideItsFolder) {
  const BeneathResolver resolver = GetParam();
  Write("model/w.bin", "weights");
  Write("model/sub/v.bin", "nested");
  Write("secret", "outside");
  const std::string model = dir_ + "/model";
  auto plain = OpenBeneath(model, "w.bin", "external data", resolver);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  std::string bytes(7, '\0');
  ASSERT_TRUE(ReadExactly(*plain, 0, 7, bytes.data(), "external data").ok());
  EXPECT_EQ(bytes, "weights");
  EXPECT_TRUE(OpenBeneath(model, "sub/v.bin", "external data", resolver).ok());
  EXPECT_TRUE(OpenBeneath(model, "./sub//v.bin", "external data", resolver).ok());
  // Reading past the end is an error naming how much there was, not a short read.
  std::string past(8, '\0');
  Status short_read = ReadExactly(*plain, 0, 8, past.data(), "external data");
  ASSERT_FALSE(short_read.ok());
  EXPECT_NE(short_read.message().find("it ends after 7 bytes"), std::string::npos) << short_read.message();

  ASSERT_EQ(symlink((dir_ + "/secret").c_str(), (model + "/out.bin").c_str()), 0);
  ASSERT_EQ(symlink("w.bin", (model + "/in.bin").c_str()), 0);
  ASSERT_EQ(symlink("sub", (model + "/linkdir").c_str()), 0);
  for (const char* path : {"out.bin", "in.bin", "linkdir/v.bin", "../secret", "sub/../../secret"}) {
    auto opened = OpenBeneath(model, path, "initializer \'w\': external data", resolver);
    ASSERT_FALSE(opened.ok()) << path;
    EXPECT_EQ(opened.status().message(),
              "initializer 'w': external data: " + model + "/" + path +
                  " goes through a symbolic link or leaves its folder: tunefarm reads only files inside the model's "
                  "folder and follows no link there")
        << path;
  }
  ASSERT_EQ(mkfifo((model + "/fifo").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto fifo = OpenBeneath(model, "fifo", "external data", resolver);
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.status().message(), "external data " + model + "/fifo is a FIFO, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // it did not block
  auto dir = OpenBeneath(model, "sub", "external data", resolver);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().message(), "external data " + model + "/sub is a directory, not a regular file");
  auto missing = OpenBeneath(model, "none.bin", "external data", resolver);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot open external data " + model + "/none.bin: No such file or directory");
}

// A hard link in the folder to a file of another user that the folder's owner could not read is
// refused (P21); one to the owner's own file is the file itself and reads.
TEST_F(SafeFile, HardLinksToOtherUsersUnreadableFilesAreRefused) {
  Write("model/own.bin", "own");
  ASSERT_EQ(link((dir_ + "/model/own.bin").c_str(), (dir_ + "/model/own2.bin").c_str()), 0);
  EXPECT_TRUE(OpenBeneath(dir_ + "/model", "own2.bin", "external data").ok());
  if (geteuid() != 0) {
    GTEST_SKIP() << "the other-user case needs root to give a file to another user (CI runs as root)";
  }
  Write("secret", "root only");
  ASSERT_EQ(chmod((dir_ + "/secret").c_str(), 0600), 0);
  ASSERT_EQ(chown((dir_ + "/model").c_str(), 65534, 65534), 0);  // the folder belongs to nobody
  ASSERT_EQ(link((dir_ + "/secret").c_str(), (dir_ + "/model/h.bin").c_str()), 0);
  auto opened = OpenBeneath(dir_ + "/model", "h.bin", "external data");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().message(), "external data: " + dir_ +
                                           "/model/h.bin is a hard link to a file of user 0 that the folder's owner "
                                           "(user 65534) could not read: refusing to read it");
}

std::string Npy(const std::string& header, const std::string& data) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h + data;
}

TEST_F(SafeFile, NpyInputsAreReadHeaderFirstAndExactly) {
  const std::string path = dir_ + "/x.npy";
  Write("x.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')));
  auto ok = runtime::ReadNpy(path);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ok->data.size(), 24u);

  auto refused = [&](const std::string& file, const std::string& expected) {
    auto a = runtime::ReadNpy(file);
    ASSERT_FALSE(a.ok()) << file;
    EXPECT_NE(a.status().message().find(expected), std::string::npos) << a.status().message();
  };
  // Devices and FIFOs: refused before a byte is read (P8: /dev/zero used to grow without bound, a
  // FIFO to block forever).
  const auto start = std::chrono::steady_clock::now();
  refused("/dev/zero", ".npy file /dev/zero is a character device, not a regular file");
  ASSERT_EQ(mkfifo((dir_ + "/fifo.npy").c_str(), 0600), 0);
  refused(dir_ + "/fifo.npy", "fifo.npy is a FIFO, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A header over 64 KiB (P8: 100 MB headers were read), lax shapes and keys (P13).
  std::string big("\x93NUMPY\x02\x00", 8);
  big += std::string("\x00\x00\x40\x06", 4);  // 100 MiB
  Write("big.npy", big + std::string(1000, ' '));
  refused(dir_ + "/big.npy", "its header is 104857600 bytes; NumPy writes a few hundred (at most 65536 are read)");
  Write("float_dims.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3.5), }", std::string(24, 0)));
  refused(dir_ + "/float_dims.npy", "bad dimension '2.0'");
  Write("twice.npy",
        Npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  refused(dir_ + "/twice.npy", "the header gives 'shape' twice");
  Write("overflow.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", ""));
  refused(dir_ + "/overflow.npy", "too many elements (over 2^40)");
  // Data that does not match the shape is refused from the file's size, before it is read.
  Write("short.npy", Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }", std::string(16, '\0')));
  refused(dir_ + "/short.npy", "holds 16 data bytes, its shape needs 4000000");
  refused(dir_ + "/none.npy", "cannot open .npy file " + dir_ + "/none.npy: No such file or directory");
}

}  // namespace
}  // namespace tunefarm
