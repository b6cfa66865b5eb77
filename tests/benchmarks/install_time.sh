#!/usr/bin/env bash
# Times the README's install command on a clean clone with no pip cache (what a new user waits for).
#
#   bash tests/benchmarks/install_time.sh            # this checkout's HEAD
#   bash tests/benchmarks/install_time.sh --keep     # keep the clone and its venv (printed) to try the commands
#
# It takes the install line from README.md itself (the line that starts with `python3 -m venv`), runs it in a
# fresh clone in a temporary folder with PIP_NO_CACHE_DIR=1 (every package downloaded and every sdist built
# again, as on a new machine), then checks that `maic --version` runs. Prints the wall time in minutes.
# Measured (2-core machine, PyPI reachable): see the README's install paragraph and ARCHITECTURE.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
keep="${1:-}"
line="$(grep -m1 '^python3 -m venv' "$repo/README.md")"
[ -n "$line" ] || { echo "no install line (python3 -m venv …) in README.md" >&2; exit 2; }
work="$(mktemp -d)"
git clone -q "$repo" "$work/maic"
cd "$work/maic"
echo "install line: $line"
start=$(date +%s)
# /usr/bin/time also gives the CPU time of everything the install ran (compilers included): what the build costs
# whatever else the machine is doing (on an idle 2-core machine the compile's wall time is about half of it).
PIP_NO_CACHE_DIR=1 /usr/bin/time -o "$work/cpu" -f '%U %S' bash -c "set -e; $line" >"$work/install.log" 2>&1 \
  || { tail -20 "$work/install.log"; exit 1; }
end=$(date +%s)
read -r cpu_user cpu_sys < "$work/cpu"
. .venv/bin/activate
maic --version
secs=$((end - start))
printf 'clean install: %d s (%d min %02d s) of wall on %s cores, load %s; CPU %.0f s user + %.0f s system\n' \
  "$secs" $((secs / 60)) $((secs % 60)) "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$cpu_user" "$cpu_sys"
if [ "$keep" = "--keep" ]; then echo "kept: $work/maic"; else rm -rf "$work"; fi
