// Fuzz target: a records database file from someone else (a team share, a copy): the bytes are
// written as an SQLite file, checked as `records check` does (opened for salvage: its SQL disabled,
// not refused) and opened the way every reader opens one (read-only, defensive, the schema checked
// for code), then listed, ranked, summarized and exported. A hostile file must cost
// an error, never a crash, a hang past the step deadline or unbounded memory. Seeds: a database
// tunefarm wrote, the same with a trigger, with a view, with hostile values.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "fuzz/fuzz_target.h"
#include "tunefarm/tuner/records.h"

namespace {

namespace tt = tunefarm::tuner;

std::string ScratchPath(const char* what) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/tunefarm_records_fuzz_" + what + "_" + std::to_string(getpid()) + ".db";
}

void Remove(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = ScratchPath("input");
  Remove(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  {
    // `records check` and `repair` open what readers refuse, with its SQL still disabled.
    auto salvage = tt::RecordsDb::Open(path, tt::RecordsDb::Mode::kSalvage);
    if (salvage.ok()) {
      (void)(*salvage)->Check();
    } else if (salvage.status().message().empty()) {
      std::abort();
    }
  }
  auto db = tt::RecordsDb::Open(path, tt::RecordsDb::Mode::kReadOnly);
  if (!db.ok()) {
    if (db.status().message().empty()) std::abort();  // every refusal says why
    Remove(path);
    return 0;
  }
  auto all = (*db)->List("", 64);
  if (all.ok()) {
    for (const auto& t : *all) {
      (void)(*db)->Ranked(t.workload_key, t.template_name, {t.target, "", {"cpu"}}, 4, nullptr);
      (void)t.ToJson();
    }
  }
  (void)(*db)->TaskStatsOf();
  (void)(*db)->ListJobs();
  std::ostringstream exported;
  (void)(*db)->ExportJsonLines(exported);
  db->reset();
  Remove(path);
  return 0;
}

namespace tunefarm::fuzz {

// Databases written here, then read back as bytes.
std::vector<std::string> Seeds() {
  const std::string path = ScratchPath("seed");
  std::vector<std::string> seeds;
  auto write = [&](const std::vector<tt::TrialRecord>& trials) {
    Remove(path);
    {
      auto db = tt::RecordsDb::Open(path, tt::RecordsDb::Mode::kCreate);
      if (!db.ok()) std::abort();
      for (auto t : trials) (void)(*db)->AddTrial(&t);
      (void)(*db)->AddJob(R"({"model":"m.onnx"})");
    }
    // Folds the WAL into the file, so the bytes are the whole database.
    (void)std::system(("sqlite3 " + path + " 'PRAGMA journal_mode=DELETE' >/dev/null 2>&1").c_str());
  };
  tt::TrialRecord t;
  t.workload_key = "dense|N1_I16|O8|NC|float32";
  t.template_name = "dense_pack";
  t.target = "llvm -mcpu=x86-64";
  t.target_keys = "cpu";
  t.config_json = R"({"tile":4})";
  t.status = "ok";
  t.costs_ms = {0.5};
  t.mean_ms = 0.5;
  tt::TrialRecord slow = t;
  slow.config_index = 1;
  slow.mean_ms = 0.75;
  slow.costs_ms = {0.75};
  write({t, slow});
  seeds.push_back(ReadAll(path));
  for (const char* sql : {"CREATE TRIGGER eat AFTER INSERT ON trials BEGIN DELETE FROM trials; END;",
                          "ALTER TABLE trials RENAME TO t2; CREATE VIEW trials AS SELECT * FROM t2;",
                          "UPDATE trials SET mean_ms = -1, config_json = x'ff00', costs_ms = 'not json';",
                          "UPDATE trials SET status = 'exploded', config_index = -5;", "PRAGMA user_version = 99;"}) {
    write({t, slow});
    (void)std::system(("sqlite3 " + path + " \"" + sql + "\" >/dev/null 2>&1").c_str());
    seeds.push_back(ReadAll(path));
  }
  Remove(path);
  return seeds;
}

}  // namespace tunefarm::fuzz
