#!/bin/sh
# Lints one generated configuration folder (make lint runs it on every folder, two at a time):
# verilator --lint-only -Wall, the waivers of rtl/lint/waivers.vlt only; the log in LOGDIR/<config>.log.
# Usage: lint_one.sh PYTHON WAIVERS LOGDIR CONFIG_DIR
set -u
py=$1 waivers=$2 logdir=$3 dir=$4
c=$(basename "$dir")
top=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['module'])" "$dir/manifest.json")
files=$("$py" -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['files']))" "$dir/manifest.json")
# shellcheck disable=SC2086  # files: the manifest's list, one word a file
if (cd "$dir" && verilator --lint-only -Wall "$waivers" $files --top-module "$top") > "$logdir/$c.log" 2>&1; then
  echo "lint: $c clean"
else
  cat "$logdir/$c.log"; echo "lint: $c FAILED"; exit 1
fi
