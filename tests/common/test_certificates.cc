#include "common/test_certificates.h"

#include <cstdlib>

namespace tunefarm::testing {

bool HaveOpenssl() { return std::system("openssl version > /dev/null 2>&1") == 0; }

std::string WriteTestCertificates(const std::string& dir) {
  const std::string q = " > /dev/null 2>&1";
  const std::string sign = " -CA ca.pem -CAkey ca.key -CAcreateserial -days 1";
  const std::string script =
      "cd " + dir + " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext" +
      " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca" + q +
      " && openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost" + q +
      " && openssl x509 -req -in server.csr -out server.pem -extfile san.ext" + sign + q +
      " && openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=client" + q +
      " && openssl x509 -req -in client.csr -out client.pem" + sign + q;
  return std::system(script.c_str()) == 0 ? "" : "openssl could not make the test certificates in " + dir;
}

std::vector<std::string> ServerTlsFlags(const std::string& dir) {
  return {"--tls-cert", dir + "/server.pem", "--tls-key", dir + "/server.key", "--tls-ca", dir + "/ca.pem"};
}

std::vector<std::string> ClientTlsFlags(const std::string& dir) {
  return {"--tls-cert", dir + "/client.pem", "--tls-key", dir + "/client.key", "--tls-ca", dir + "/ca.pem"};
}

}  // namespace tunefarm::testing
