// The daemons' strict flags: listen addresses and integers are parsed, never guessed; token files.
#include "tunefarm/service/flags.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/service/auth.h"

namespace tunefarm::service {
namespace {

std::string ListenError(const char* text) {
  auto r = ParseListenAddress(text);
  return r.ok() ? "accepted as " + r->ToString() : r.status().message();
}

TEST(ListenAddress, AcceptsHostPortAndMarksWildcards) {
  auto a = ParseListenAddress("127.0.0.1:9190");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9190);
  EXPECT_FALSE(a->wildcard);
  EXPECT_EQ(ParseListenAddress("localhost:0")->port, 0);
  EXPECT_TRUE(ParseListenAddress("0.0.0.0:9190")->wildcard);
  auto v6 = ParseListenAddress("[::]:65535");
  ASSERT_TRUE(v6.ok());
  EXPECT_TRUE(v6->wildcard);
  EXPECT_EQ(v6->ToString(), "[::]:65535");
  EXPECT_EQ(ParseListenAddress("[::1]:1")->ToString(), "[::1]:1");
}

TEST(ListenAddress, RefusesWhatUsedToBindSomethingElse) {
  EXPECT_EQ(ListenError("0"),
            "--listen '0': expected HOST:PORT (e.g. 127.0.0.1:9190 for this machine only, 0.0.0.0:9190 for every "
            "interface; port 0 picks a free port)");
  EXPECT_EQ(ListenError(":99999"),
            "--listen ':99999': the host is missing (e.g. 127.0.0.1:9190 for this machine only, 0.0.0.0:9190 for every "
            "interface; port 0 picks a free port)");
  EXPECT_EQ(ListenError("127.0.0.1:99999"), "--listen '127.0.0.1:99999': the port must be a number in 0..65535");
  EXPECT_EQ(ListenError("127.0.0.1:-1"), "--listen '127.0.0.1:-1': the port must be a number in 0..65535");
  EXPECT_EQ(ListenError("127.0.0.1:"), "--listen '127.0.0.1:': the port must be a number in 0..65535");
  EXPECT_EQ(ListenError("127.0.0.1:80x"), "--listen '127.0.0.1:80x': the port must be a number in 0..65535");
  EXPECT_EQ(ListenError("a b:1"),
            "--listen 'a b:1': 'a b' is not a host name or address (IPv6 goes in brackets: [::1]:9190)");
  EXPECT_EQ(ListenError("[zz]:1"), "--listen '[zz]:1': 'zz' is not an IPv6 address");
}

TEST(IntFlag, DigitsOnlyWithinRange) {
  EXPECT_EQ(*ParseIntFlag("--threads", "4", 1, 1024), 4);
  EXPECT_EQ(*ParseIntFlag("--x", "-9223372036854775808", INT64_MIN, INT64_MAX), INT64_MIN);
  EXPECT_EQ(*ParseIntFlag("--x", "+7", 0, 10), 7);
  EXPECT_EQ(ParseIntFlag("--threads", "4x", 1, 1024).status().message(),
            "--threads '4x': expected an integer in [1, 1024]");
  EXPECT_EQ(ParseIntFlag("--threads", "", 1, 1024).status().message(),
            "--threads '': expected an integer in [1, 1024]");
  EXPECT_EQ(ParseIntFlag("--threads", " 4", 1, 1024).status().message(),
            "--threads ' 4': expected an integer in [1, 1024]");
  EXPECT_EQ(ParseIntFlag("--threads", "0", 1, 1024).status().message(),
            "--threads '0': out of range, expected in [1, 1024]");
  EXPECT_EQ(ParseIntFlag("--x", "9223372036854775808", INT64_MIN, INT64_MAX).status().message(),
            "--x '9223372036854775808': out of range, expected in [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(ParseIntFlag("--x", "99999999999999999999", 0, 10).status().message(),
            "--x '99999999999999999999': out of range, expected in [0, 10]");
}

TEST(DaemonFlags, NamesTheFlagInEveryError) {
  auto parse = [](std::vector<std::string> args) {
    CommonDaemonFlags common;
    int threads = 1;
    CLI::App app{"test", "prog"};
    AddCommonDaemonFlags(app, &common);
    AddIntFlag(app, "--threads", &threads, 1, 1024, "threads");
    std::vector<const char*> argv = {"prog"};
    for (auto& a : args) argv.push_back(a.c_str());
    bool help = false;
    Status s = ParseArguments(app, int(argv.size()), argv.data(), &help);
    if (help) return std::string("help");
    return s.ok() ? "ok " + common.listen.ToString() + " " + std::to_string(threads) : s.message();
  };
  EXPECT_EQ(parse({"--listen", "127.0.0.1:0", "--threads", "3"}), "ok 127.0.0.1:0 3");
  EXPECT_EQ(parse({"--threads", "3"}), "--listen is required");
  EXPECT_EQ(parse({"--listen", "127.0.0.1:0", "--threads", "4x"}), "--threads '4x': expected an integer in [1, 1024]");
  EXPECT_EQ(parse({"--listen", "0"}).substr(0, 30), "--listen '0': expected HOST:PO");
  EXPECT_EQ(parse({"--listen", "127.0.0.1:0", "--thread", "4"}), "unknown flag --thread");
  EXPECT_EQ(parse({"--listen", "127.0.0.1:0", "stray"}), "unexpected argument 'stray'");
  EXPECT_EQ(parse({"--listen"}), "--listen: 1 required HOST:PORT missing");
  // A mistyped flag is named, not the required one it left missing.
  EXPECT_EQ(parse({"--listn", "127.0.0.1:0"}), "unknown flag --listn");
  EXPECT_EQ(parse({"--help"}), "help");
  EXPECT_EQ(parse({"--listen", "127.0.0.1:0", "--threads", "3", "--threads", "4"}), "ok 127.0.0.1:0 4");
}

}  // namespace
}  // namespace tunefarm::service

namespace tunefarm::service {
namespace {

// Token files (issue 15): a directory, a device that never ends and an oversized file are refused
// by what they are, before anything is read.
TEST(TokenFile, OnlyASmallRegularFileIsAToken) {
  const std::string dir = ::testing::TempDir() + "tunefarm_token_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  auto directory = LoadToken(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(), "token file " + dir + " is not a regular file");
  auto zero = LoadToken("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "token file /dev/zero is not a regular file");
  const std::string big = dir + "/big";
  { std::ofstream(big) << std::string(10000, 'a'); }
  auto oversized = LoadToken(big);
  ASSERT_FALSE(oversized.ok());
  EXPECT_EQ(oversized.status().message(), "token file " + big + " holds 10000 bytes; a token is at most 4096");
  auto missing = LoadToken(dir + "/none");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot read token file " + dir + "/none: No such file or directory");
  const std::string good = dir + "/good";
  { std::ofstream(good) << "0123456789abcdef0123\n"; }
  auto token = LoadToken(good);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token, "0123456789abcdef0123");
  // Anyone could put their own token into a world-writable file (issue 30): refused by its mode.
  ASSERT_EQ(chmod(good.c_str(), 0666), 0);
  auto writable = LoadToken(good);
  ASSERT_FALSE(writable.ok());
  EXPECT_EQ(writable.status().message(), "token file " + good +
                                             " is writable by every user (mode 0666): anyone could replace the farm's "
                                             "token; chmod 600 it");
  ASSERT_EQ(chmod(good.c_str(), 0600), 0);
  EXPECT_TRUE(LoadToken(good).ok());
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::service
