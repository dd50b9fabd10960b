#!/usr/bin/env bash
# Benchmark: how long the commands a script calls in a loop take from start to end through
# `node dist/cli/main.js`, against `node -e 0` (Node's own start-up) in the same run. Each round
# runs every command once, in turn (alternated, so a burst of load from elsewhere hits all of them
# alike); the medians of wall time and of CPU seconds (user + system) are printed, with the load
# average. Real work, small: `check` against a depotkit serve of a 1 KiB demo depot, `installer
# status` against the installer simulator, `cert inspect` of a server chain, `depot verify` of the
# demo depot. check-floor (scripts/bench/check-floor.mjs) is the least a Node process can do to
# make the requests `check` must make (plain node:https on one connection): the floor under
# check's figure. BEFORE=<another build's dist> runs each command with that build too, alternated
# with this one in every round, and prints both. Usage:
#   [DIST=<dist>] [BEFORE=<dist>] scripts/bench/startup.sh [rounds, default 15] [work dir, default a temp dir]
set -euo pipefail
rounds=${1:-15}
work=${2:-$(mktemp -d /var/tmp/depotkit-startup-bench-XXXX)}
repo=$(cd "$(dirname "$0")/../.." && pwd)
# DIST: another build of the same sources (a copy outside a checkout others rebuild meanwhile). The CLI's
# bundle reads what it leaves to Node from node_modules and templates/ two folders up from dist/cli/: copy
# dist/ into a folder that has them, e.g. <x>/dist with links <x>/node_modules and <x>/templates, DIST=<x>/dist.
main=${DIST:-$repo/dist}/cli/main.js
cli="node $main"
free_port() { node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }

# Fixtures: a demo depot, a CA and a server certificate, a password.
[ -d "$work/depot/PROD" ] || $cli depot demo "$work/depot" --binary-size 1024 >/dev/null
[ -f "$work/pki/ca/ca-cert.pem" ] || $cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
[ -f "$work/pki/server/server-chain.pem" ] || $cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
echo bench-password >"$work/password"

p_serve=$(free_port)
$cli serve "$work/depot" --host 127.0.0.1 --port "$p_serve" --cert "$work/pki/server/server-chain.pem" --key "$work/pki/server/server-key.pem" \
  --user bench --password-file "$work/password" --workers 1 >"$work/serve.log" 2>&1 &
serve_pid=$!
$cli sim installer --quiet --password-file "$work/password" --cert-out "$work/installer-cert.pem" --json >"$work/sim.json" 2>"$work/sim.log" &
sim_pid=$!
trap 'kill $serve_pid $sim_pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  [ -s "$work/sim.json" ] && curl -s -o /dev/null --cacert "$work/pki/ca/ca-cert.pem" "https://localhost:$p_serve/" && break
  sleep 0.1
done
installer=$(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).url)" "$work/sim.json")

names=(node-e-0 check-floor version check installer-status cert-inspect depot-verify)
builds=(after)
[ -n "${BEFORE:-}" ] && builds=(before after)
cli_of() { if [ "$1" = before ]; then echo "node $BEFORE/cli/main.js"; else echo "$cli"; fi; }
run() { # name
  case $1 in
    node-e-0) node -e 0 ;;
    check-floor) node "$repo/scripts/bench/check-floor.mjs" "https://localhost:$p_serve/" "$work/pki/ca/ca-cert.pem" bench "$work/password" "$work/depot" ;;
    version) $cli --version ;;
    check) $cli check "https://localhost:$p_serve/" --ca "$work/pki/ca" --user bench --password-file "$work/password" ;;
    installer-status) $cli installer status --installer "$installer" --installer-ca "$work/installer-cert.pem" --password-file "$work/password" ;;
    cert-inspect) $cli cert inspect "$work/pki/server/server-chain.pem" ;;
    depot-verify) $cli depot verify "$work/depot" ;;
  esac
}
# Each command once, and it must succeed: a command that fails early is no measure of one that works.
for n in "${names[@]}"; do run "$n" >/dev/null 2>"$work/err" || { echo "$n failed:" >&2; cat "$work/err" >&2; exit 1; }; done

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for n in "${names[@]}"; do for b in "${builds[@]}"; do : >"$work/t.$n.$b"; done; done
for _ in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    for b in "${builds[@]}"; do
      # node -e 0 is the same for both builds: once a round.
      case $n in node-e-0 | check-floor) [ "$b" = before ] && continue ;; esac
      /usr/bin/time -f '%e %U %S' -a -o "$work/t.$n.$b" bash -c "$(declare -f run); cli='$(cli_of "$b")' repo='$repo' p_serve=$p_serve installer='$installer' work='$work' run $n" >/dev/null 2>&1
    done
  done
done

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
echo "node $(node --version), $rounds alternated rounds, load average $load_start at the start and $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(nproc) cores"
printf '%-18s %-7s %10s %10s\n' command build 'wall s' 'cpu s'
for n in "${names[@]}"; do
  for b in "${builds[@]}"; do
    [ -s "$work/t.$n.$b" ] || continue
    wall=$(awk '{print $1}' "$work/t.$n.$b" | median)
    cpu=$(awk '{print $2 + $3}' "$work/t.$n.$b" | median)
    printf '%-18s %-7s %10.3f %10.3f\n' "$n" "$b" "$wall" "$cpu"
  done
done
