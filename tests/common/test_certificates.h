// A throwaway certificate authority for the mutual-TLS tests, made with the openssl command:
// DIR/ca.pem, DIR/server.{pem,key} (for 127.0.0.1 and localhost) and DIR/client.{pem,key}, each
// valid for a day. Needs openssl (scripts/setup.sh installs it).
#ifndef TUNEFARM_TESTS_COMMON_TEST_CERTIFICATES_H_
#define TUNEFARM_TESTS_COMMON_TEST_CERTIFICATES_H_

#include <string>
#include <vector>

namespace tunefarm::testing {

bool HaveOpenssl();
// "" on success, else what failed. DIR must exist.
std::string WriteTestCertificates(const std::string& dir);
// A daemon's flags for the server certificate of WriteTestCertificates(dir).
std::vector<std::string> ServerTlsFlags(const std::string& dir);
// A client's flags (tunefarm tune, dashboard): the client certificate.
std::vector<std::string> ClientTlsFlags(const std::string& dir);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_TEST_CERTIFICATES_H_
