#!/usr/bin/env python3
"""Runs clang-tidy on sources, skipping those a previous run found clean with exactly the same inputs.

What clang-tidy reports on a translation unit depends only on: the clang-tidy binary, the .clang-tidy
configuration, the extra arguments, the unit's compile command, and the content of every file the
unit reads. The build already knows the last: ninja records each object's dependencies (the source
and every header, system ones included, from the compiler's -MD output). So a clean result is cached
under a SHA-256 of all of them, as ccache caches objects; a source with any changed input, one whose
dependencies the build has not recorded, or one that had findings is checked again. Findings are
never cached: a unit with findings fails every run until it is fixed.

Usage: clang_tidy_cached.py CLANG_TIDY BUILD_DIR JOBS SOURCE... -- CLANG_TIDY_ARGS...
Cache: $TUNEFARM_TIDY_CACHE, else $XDG_CACHE_HOME/tunefarm-clang-tidy (~/.cache/...); removing it
only costs the next run its time. Exit status: 0 when every source is clean, 1 otherwise.
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys


def ninja_deps(build):
    """Object path (relative to the build dir) -> its recorded dependency paths, VALID entries only."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    deps, current = {}, None
    for line in out.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            obj, _, status = line.partition(": ")
            current = obj if "(VALID)" in status else None
            if current is not None:
                deps[current] = []
        elif current is not None:
            deps[current].append(line.strip())
    return deps


def object_of(command):
    args = shlex.split(command)
    return args[args.index("-o") + 1] if "-o" in args else None


class FileHashes:
    def __init__(self):
        self.memo = {}

    def of(self, path):
        if path not in self.memo:
            try:
                with open(path, "rb") as f:
                    self.memo[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                self.memo[path] = None
        return self.memo[path]


def main(argv):
    sep = argv.index("--")
    tidy, build, jobs, sources, tidy_args = argv[1], argv[2], int(argv[3]), argv[4:sep], argv[sep + 1:]
    root = os.getcwd()
    cache = os.environ.get("TUNEFARM_TIDY_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tunefarm-clang-tidy")
    os.makedirs(cache, exist_ok=True)

    version = subprocess.run([tidy, "--version"], capture_output=True, text=True).stdout
    with open(os.path.join(root, ".clang-tidy"), "rb") as f:
        config = f.read()
    commands = {}
    for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
        commands[os.path.relpath(entry["file"], root)] = entry
    deps = ninja_deps(build)
    hashes = FileHashes()

    def key_of(source, hashes):
        entry = commands.get(source)
        obj = object_of(entry["command"]) if entry else None
        if obj is None or obj not in deps:
            return None
        h = hashlib.sha256()
        # Paths under the source tree hash relative to it (as ccache's CCACHE_BASEDIR does), so a clone
        # elsewhere -- CI's -- finds the results of this one; dependencies are already relative to the
        # build directory, or absolute system headers.
        for part in (version, config.decode(), "\0".join(tidy_args), entry["directory"].replace(root, "<src>"),
                     entry["command"].replace(root, "<src>")):
            h.update(part.encode() + b"\0")
        for dep in deps[obj]:
            digest = hashes.of(os.path.join(build, dep))
            if digest is None:
                return None
            h.update(dep.replace(root, "<src>").encode() + b"\0" + digest.encode() + b"\0")
        return h.hexdigest()

    keys = {s: key_of(s, hashes) for s in sources}
    clean = [s for s in sources if keys[s] and os.path.exists(os.path.join(cache, keys[s]))]
    todo = [s for s in sources if s not in clean]
    print(f"check_style: {len(clean)} of {len(sources)} sources unchanged since a clean clang-tidy run "
          f"({cache}); checking {len(todo)}", flush=True)

    def check(source):
        run = subprocess.run([tidy, "-p", build, *tidy_args, source], capture_output=True, text=True)
        # Cached only if no input changed while it ran (an edit during the check: checked again next time).
        unchanged = keys[source] is not None and key_of(source, FileHashes()) == keys[source]
        return source, run.returncode, run.stdout + run.stderr, unchanged

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for source, code, output, unchanged in pool.map(check, todo):
            if code != 0:
                failed += 1
                sys.stdout.write(output)
                print(f"check_style: clang-tidy: {source} has findings", flush=True)
            elif unchanged:
                open(os.path.join(cache, keys[source]), "w").close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
