#!/usr/bin/env bash
# The dashboard page's own checks, run by CTest (tests/CMakeLists.txt, DashboardWeb.*):
#   dashboard_web_check.sh unit|eslint|prettier WEB_DIR
# unit: node's test runner over WEB_DIR/test (the page's data shaping, formats and addresses);
# eslint: WEB_DIR/eslint.config.js, no warnings allowed; prettier: --check with package.json's
# settings. node, and eslint and prettier from package-lock.json (`npm ci`, which scripts/setup.sh
# runs), are fixtures: without them a check skips with exit 77, or fails under
# TUNEFARM_REQUIRE_FIXTURES=1 (tests/README.md, "Fixtures").
set -euo pipefail
mode=${1:-} web=${2:-}
if [ -z "$web" ] || [ ! -d "$web" ]; then
  echo "usage: $0 unit|eslint|prettier WEB_DIR (got WEB_DIR '$web')" >&2
  exit 2
fi

missing() {
  if [ "${TUNEFARM_REQUIRE_FIXTURES:-0}" = 1 ]; then
    echo "FAIL: missing fixture (TUNEFARM_REQUIRE_FIXTURES=1): $*" >&2
    exit 1
  fi
  echo "SKIP: $*" >&2
  exit 77
}

command -v node > /dev/null || missing "node is missing (apt install nodejs npm; scripts/setup.sh does)"
cd "$web"
case $mode in
  unit) exec node --test test/ ;;
  eslint) tool=node_modules/eslint/bin/eslint.js args=(--max-warnings 0 .) ;;
  prettier) tool=node_modules/prettier/bin/prettier.cjs args=(--check .) ;;
  *)
    echo "usage: $0 unit|eslint|prettier WEB_DIR (got mode '$mode')" >&2
    exit 2
    ;;
esac
[ -f "$tool" ] || missing "$web/$tool is missing: npm ci --prefix $web (scripts/setup.sh does)"
exec node "$tool" "${args[@]}"
