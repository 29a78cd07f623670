// tunefarm records list|best|stats|export|import|copy|check|repair [--records DB] [--workload KEY] [--target T]
// [--json]
//   export [-o FILE]   JSON lines to FILE or stdout      import FILE   JSON lines into the DB
//   copy --from DB --to DB   every trial, between SQLite files and PostgreSQL databases either way
//   check                    what is wrong with a database the others refuse   repair -o DB   keep its good trials
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/common_flags.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::cli {
namespace {

struct RecordsFlags {
  std::string action;  // the subcommand
  std::string records = kDefaultRecordsDb, file, output, workload, target;
  std::string from, to;  // copy
  bool json = false;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "tunefarm records: %s\n", message.c_str());
  return 1;
}

// Every trial of one database into another, keeping uids and times: trials already there (by
// uid) are skipped, so copying again, or back, never duplicates one. One transaction: all or none.
// Jobs are the source daemon's and stay there: the copies name none (job_id 0), since an id would
// point at an unrelated job of the destination.
int Copy(const RecordsFlags& f) {
  auto from = tuner::RecordsDb::Open(f.from, tuner::RecordsDb::Mode::kReadOnly);
  if (!from.ok()) return Fail(from.status().message());
  auto to = tuner::RecordsDb::Open(f.to, tuner::RecordsDb::Mode::kCreate);
  if (!to.ok()) return Fail(to.status().message());
  auto trials = (*from)->List();
  if (!trials.ok()) return Fail(trials.status().message());
  for (auto& t : *trials) t.job_id = 0;
  std::fprintf(stderr, "copying %zu trials from %s to %s\n", trials->size(), (*from)->location().c_str(),
               (*to)->location().c_str());
  auto added = (*to)->AddTrials(*trials);
  if (!added.ok()) return Fail(added.status().message() + " (nothing copied)");
  std::printf("copied %lld trials from %s to %s (%lld already there)\n", static_cast<long long>(*added),
              (*from)->location().c_str(), (*to)->location().c_str(),
              static_cast<long long>(trials->size()) - static_cast<long long>(*added));
  return 0;
}

// What is wrong with a database the other commands refuse or read only in part; exit 1 when
// anything is. Nothing in the file runs (Mode::kSalvage) and nothing is written.
int Check(const RecordsFlags& f) {
  auto db = tuner::RecordsDb::Open(f.records, tuner::RecordsDb::Mode::kSalvage);
  if (!db.ok()) return Fail(db.status().message());
  auto problems = (*db)->Check();
  if (!problems.ok()) return Fail(problems.status().message());
  if (problems->empty()) {
    std::printf("records database %s: no problems found\n", (*db)->location().c_str());
    return 0;
  }
  std::printf("records database %s: %zu problem(s)\n", (*db)->location().c_str(), problems->size());
  for (const auto& p : *problems) std::printf("  %s\n", p.c_str());
  std::printf(
      "`tunefarm records repair --records %s -o NEW.db` copies the trials that can be kept into a new "
      "database\n",
      f.records.c_str());
  return 1;
}

// Every trial Check does not object to, into another database (created when missing); the
// source is only read. Job ids are dropped, as by copy.
int Repair(const RecordsFlags& f) {
  // The same file under two names (./a.db, a hard link) is the same database: compared by inode.
  struct stat in {
  }, out{};
  const bool same_file = stat(f.records.c_str(), &in) == 0 && stat(f.output.c_str(), &out) == 0 &&
                         in.st_dev == out.st_dev && in.st_ino == out.st_ino;
  if (f.output == f.records || same_file) {
    return Fail("-o " + f.output + " is the database --records names (the source is only read): name a new one");
  }
  auto from = tuner::RecordsDb::Open(f.records, tuner::RecordsDb::Mode::kSalvage);
  if (!from.ok()) return Fail(from.status().message());
  std::vector<std::string> skipped;
  auto trials = (*from)->Salvage(&skipped);
  if (!trials.ok()) return Fail(trials.status().message());
  auto to = tuner::RecordsDb::Open(f.output, tuner::RecordsDb::Mode::kCreate);
  if (!to.ok()) return Fail(to.status().message());
  for (auto& t : *trials) t.job_id = 0;
  auto added = (*to)->AddTrials(*trials);
  if (!added.ok()) return Fail(added.status().message() + " (nothing copied)");
  std::printf("kept %zu trials of %s in %s (%lld new there); left out %zu\n", trials->size(),
              (*from)->location().c_str(), (*to)->location().c_str(), static_cast<long long>(*added), skipped.size());
  for (const auto& s : skipped) std::printf("  %s\n", s.c_str());
  return 0;
}

int Records(const RecordsFlags& f) {
  const std::string& sub = f.action;
  if (sub == "copy") return Copy(f);
  if (sub == "check") return Check(f);
  if (sub == "repair") return Repair(f);
  const bool importing = sub == "import";
  const std::string& path = f.records;
  // Import creates the database; every other subcommand reads an existing one, read-only.
  auto db =
      tuner::RecordsDb::Open(path, importing ? tuner::RecordsDb::Mode::kCreate : tuner::RecordsDb::Mode::kReadOnly);
  if (!db.ok()) return Fail(db.status().message());
  const bool json = f.json;

  if (importing) {
    std::ifstream in(f.file);
    if (!in) return Fail("cannot open " + f.file);
    // The records layer checks the fields; the target string is the compiler's to parse.
    auto added = (*db)->ImportJsonLines(in, [](const tuner::TrialRecord& t) -> Status {
      auto target = compiler::ParseTarget(t.target);
      if (!target.ok()) return Status::InvalidArgument("field 'target': " + target.status().message());
      return Status::OK();
    });
    if (!added.ok()) return Fail(f.file + ": " + added.status().message() + " (nothing imported)");
    std::printf("imported %lld trials into %s\n", static_cast<long long>(*added), (*db)->location().c_str());
    return 0;
  }
  if (sub == "export") {
    const std::string& out_path = f.output;
    if (out_path.empty()) {
      Status s = (*db)->ExportJsonLines(std::cout);
      return s.ok() ? 0 : Fail(s.message());
    }
    // A file gets all of the export or keeps what it held (WriteFileAtomically), streamed.
    Status s = WriteFileAtomically(out_path, [&](std::ostream& out) { return (*db)->ExportJsonLines(out); });
    if (!s.ok()) return Fail(s.message());
    return 0;
  }
  // --workload: a key as `tunefarm tasks` prints it ("conv2d_nchwc:conv2d|N1..."), a workload key
  // alone (every implementation), or a key from before schema version 3 ("conv2d_nchwc|N1...").
  const tuner::StoredTaskName task = tuner::ParseStoredTaskName(f.workload);
  auto trials = (*db)->List(task.key, -1, task.implementation);
  if (!trials.ok()) return Fail(trials.status().message());
  if (sub == "list") {
    if (json) {
      for (const auto& t : *trials) std::printf("%s\n", t.ToJson().c_str());
      return 0;
    }
    std::printf("%6s  %-9s %10s %10s %7s  %-8s %s\n", "id", "status", "mean ms", "GFLOPS", "threads", "config",
                "workload / target");
    for (const auto& t : *trials) {
      const double gflops = t.gflops();
      std::printf("%6lld  %-9.9s %10.4f %10.2f %7d  %-8lld %s / %s%s%s\n", static_cast<long long>(t.id),
                  t.status.c_str(), t.mean_ms, gflops, t.threads, static_cast<long long>(t.config_index),
                  compiler::TaskName(t.template_name, t.workload_key).c_str(), t.target.c_str(),
                  t.error_message.empty() ? "" : "  ", t.error_message.c_str());
    }
    return 0;
  }
  // best and stats group by (implementation, workload, target, thread count): records are per
  // thread count, as compile applies them.
  struct Group {
    int64_t trials = 0, ok = 0;
    std::map<std::string, int64_t> errors;
    const tuner::TrialRecord* best = nullptr;
  };
  std::map<std::tuple<std::string, std::string, std::string, int>, Group> groups;
  std::string target_filter;
  if (!f.target.empty()) {
    auto t = compiler::ParseTarget(f.target);
    if (!t.ok()) return Fail(t.status().message());
    target_filter = t->ToString();
  }
  for (const auto& t : *trials) {
    if (!target_filter.empty() && t.target != target_filter) continue;
    Group& g = groups[{t.template_name, t.workload_key, t.target, t.threads}];
    ++g.trials;
    if (t.ok()) {
      ++g.ok;
      // A stored time no kernel could take (an edited or damaged row) is never the best, as compile
      // never applies it.
      if (!t.usable()) {
        ++g.errors["unusable time"];
      } else if (!g.best || t.mean_ms < g.best->mean_ms) {
        g.best = &t;
      }
    } else {
      ++g.errors[t.status];
    }
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [key, g] : groups) {
    nlohmann::ordered_json e;
    e["template"] = std::get<0>(key);
    e["workload"] = std::get<1>(key);
    e["target"] = std::get<2>(key);
    e["threads"] = std::get<3>(key);
    e["trials"] = g.trials;
    e["ok"] = g.ok;
    if (g.best) {
      e["best_config_index"] = g.best->config_index;
      e["best_mean_ms"] = g.best->mean_ms;
      e["best_gflops"] = g.best->gflops();
    }
    if (sub == "stats") e["errors"] = g.errors;
    out.push_back(e);
  }
  if (json) {
    std::printf("%s\n", out.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  for (const auto& e : out) {
    const int threads = e["threads"].get<int>();
    std::printf("%s:%s on %s at %d thread%s: %lld trials, %lld ok", e["template"].get<std::string>().c_str(),
                e["workload"].get<std::string>().c_str(), e["target"].get<std::string>().c_str(), threads,
                threads == 1 ? "" : "s", static_cast<long long>(e["trials"].get<int64_t>()),
                static_cast<long long>(e["ok"].get<int64_t>()));
    if (e.contains("best_mean_ms")) {
      std::printf(", best config %lld: %.4f ms (%.2f GFLOPS)",
                  static_cast<long long>(e["best_config_index"].get<int64_t>()), e["best_mean_ms"].get<double>(),
                  e["best_gflops"].get<double>());
    }
    if (e.contains("errors")) {
      for (const auto& [type, count] : e["errors"].items())
        std::printf(", %s: %lld", type.c_str(), static_cast<long long>(count.get<int64_t>()));
    }
    std::printf("\n");
  }
  if (out.empty()) {
    std::printf("no records%s in %s\n", target_filter.empty() ? "" : (" for " + target_filter).c_str(),
                (*db)->location().c_str());
  }
  return 0;
}

}  // namespace

Action DeclareRecords(CLI::App& app) {
  auto f = std::make_shared<RecordsFlags>();
  for (auto& [name, sub] :
       AddActions(app,
                  {{"list", "every trial: status, time, config, workload and target"},
                   {"best", "the fastest config per workload and target"},
                   {"stats", "trials, successes and errors by kind per workload and target"},
                   {"export", "every trial as JSON lines (to move them to another machine)"},
                   {"import", "add the trials of a JSON lines file (all or nothing)"},
                   {"copy", "every trial of one database into another: SQLite and PostgreSQL, either way"},
                   {"check", "what is wrong with a database the other commands refuse (nothing in it runs)"},
                   {"repair", "copy the trials that can be kept from such a database into a new one"}},
                  &f->action)) {
    const bool importing = name == "import";
    if (name == "copy") {
      sub->add_option("--from", f->from, "the database to read: a file or postgresql://USER@HOST[:PORT]/DB")
          ->type_name("DB")
          ->required();
      sub->add_option("--to", f->to, "the database to add to (created when missing)")->type_name("DB")->required();
      continue;
    }
    AddRecordsFlag(*sub, &f->records,
                   importing ? "the database to add to (created when missing; default ./tunefarm.db)"
                             : "the database to read, read-only (default ./tunefarm.db)");
    if (name == "check") continue;
    if (name == "repair") {
      sub->add_option("-o,--output", f->output, "the database to copy the kept trials into (created when missing)")
          ->type_name("DB")
          ->required();
      continue;
    }
    if (importing) {
      sub->add_option("FILE", f->file, "JSON lines from tunefarm records export")->required();
    } else if (name == "export") {
      sub->add_option("-o,--output", f->output, "write to FILE atomically (default: stdout)")->type_name("FILE");
    } else {
      sub->add_option("--workload", f->workload,
                      "only this task (a key as tunefarm tasks prints it), or every implementation of a workload key")
          ->type_name("KEY");
      if (name != "list") {
        AddTargetFlag(*sub, &f->target)->description("only records of this target");
      }
      AddJsonFlag(*sub, &f->json);
    }
  }
  return [f] { return Records(*f); };
}

}  // namespace tunefarm::cli
