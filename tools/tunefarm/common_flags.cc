#include "tools/tunefarm/common_flags.h"

namespace tunefarm::cli {

CLI::Option* AddTargetFlag(CLI::App& app, std::string* out) {
  return app
      .add_option("--target", *out,
                  "what to compile for: native (default), a board (rasp5, rasp4b, rasp3b), a GPU (h100, h200, cuda "
                  "-arch=sm_90) or "
                  "an LLVM target (llvm -mtriple=... -mcpu=...)")
      ->type_name("T");
}

CLI::Option* AddOptLevelFlag(CLI::App& app, int* out) {
  return AddIntFlag(app, "--opt-level", out, 0, 3, "graph optimization level (default 3)");
}

CLI::Option* AddThreadsFlag(CLI::App& app, int* out, const std::string& what) {
  return AddIntFlag(app, "--threads", out, 1, 1024,
                    what + " (default: this machine's cores for native, measured here; else 1)");
}

CLI::Option* AddRecordsFlag(CLI::App& app, std::string* out, const std::string& help) {
  return app.add_option("--records", *out, help + "; a file or postgresql://USER@HOST[:PORT]/DB")->type_name("DB");
}

CLI::Option* AddJsonFlag(CLI::App& app, bool* out) {
  return app.add_flag("--json", *out, "print JSON instead of a table");
}

CLI::Option* AddInputShapeFlag(CLI::App& app, std::vector<compiler::InputShape>* out) {
  return AddCheckedFlag(
      app, "--input-shape",
      [out](const std::string& text) -> Status {
        TUNEFARM_ASSIGN_OR_RETURN(compiler::InputShape shape, compiler::ParseInputShape(text));
        out->push_back(std::move(shape));
        return Status::OK();
      },
      "fix a graph input's shape (repeatable), for models whose inputs are symbolic: data:1x3x224x224; a range "
      "keeps dimension 0 symbolic, one artifact for every size: data:1..8x3x224x224",
      "NAME:DIMS");
}

std::vector<std::pair<std::string, CLI::App*>> AddActions(
    CLI::App& app, std::initializer_list<std::pair<const char*, const char*>> name_and_help, std::string* chosen) {
  app.require_subcommand(1);
  std::vector<std::pair<std::string, CLI::App*>> out;
  for (const auto& [name, help] : name_and_help) {
    CLI::App* sub = app.add_subcommand(name, help);
    sub->callback([chosen, action = std::string(name)] { *chosen = action; });
    out.emplace_back(name, sub);
  }
  return out;
}

void AddFarmClientFlags(CLI::App& app, FarmClientFlags* out, bool tls) {
  app.add_option("--token-file", out->token_file, "the farm token (else $TUNEFARM_TOKEN)")->type_name("PATH");
  if (!tls) return;
  app.add_option("--tls-cert", out->tls_cert, "this client's certificate; with --tls-key and --tls-ca: mutual TLS")
      ->type_name("PEM");
  app.add_option("--tls-key", out->tls_key, "the certificate's private key")->type_name("PEM");
  app.add_option("--tls-ca", out->tls_ca, "the CA the server's certificate must come from")->type_name("PEM");
}

}  // namespace tunefarm::cli
