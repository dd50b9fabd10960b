#!/usr/bin/env bash
# Benchmark: what the status page and /metrics cost on the download path. One `depotkit serve`
# (default workers, TLS, Basic auth) serves a page-cached file; its throughput is measured with
# curl, one download and 4 concurrent ones, without and with a scraper that asks for /metrics
# (and the status page) every second, as Prometheus and a monitor would. Runs alternate between
# the two cases, best of N, so that load from elsewhere hits both alike. At the end the server's
# byte counter must equal the bytes downloaded. Usage:
#   scripts/bench/serve-metrics.sh [file size, default 1G] [rounds, default 3] [work dir, default a temp dir]
set -euo pipefail
size=${1:-1G}
rounds=${2:-3}
work=${3:-$(mktemp -d /var/tmp/depotkit-metrics-bench-XXXX)}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node $repo/dist/cli/main.js"
port=18448
now() { date +%s.%N; }
min() { echo "if ($1 < $2) $1 else $2" | bc; }
hz=$(getconf CLK_TCK)
# CPU ticks of every serving process (the primary and its workers): what the server spent, whatever else runs.
cpu_ticks() { local t=0; for p in $1 $(pgrep -P "$1" || true); do [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $t; }

[ -d "$work/root/PROD" ] || $cli depot demo "$work/root" --binary-size 1K --force >/dev/null
file=PROD/COMP/VCENTER/bench-$size.iso
[ -f "$work/root/$file" ] || head -c "$size" /dev/zero >"$work/root/$file"
bytes=$(stat -c %s "$work/root/$file")
cat "$work/root/$file" >/dev/null # page cache
[ -f "$work/pki/ca/ca-cert.pem" ] || $cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
[ -f "$work/pki/server/server-chain.pem" ] || $cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
ca=$work/pki/ca/ca-cert.pem
printf 'bench\n' >"$work/password"

$cli serve "$work/root" --host 127.0.0.1 --port $port --cert "$work/pki/server/server-chain.pem" --key "$work/pki/server/server-key.pem" \
  --user bench --password-file "$work/password" --json >"$work/serve.json" 2>"$work/serve.err" &
serve_pid=$!
scraper_pid=
trap 'kill $serve_pid ${scraper_pid:-} 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"pid"' "$work/serve.json" 2>/dev/null && break; sleep 0.1; done
url=https://localhost:$port
get() { curl -sS --fail --cacert "$ca" -u bench:bench "$@"; }
get -o /dev/null "$url/metrics" || { echo "no /metrics; see $work/serve.err" >&2; exit 1; }

# n concurrent downloads; prints the wall time in seconds; checks every byte count. Run in a
# subshell (t=$(download n)): its wait is for its own downloads, not the scraper.
download() {
  local t; t=$(now)
  for i in $(seq "$1"); do get -o /dev/null -w '%{size_download}\n' "$url/$file" >"$work/got.$i" & done
  wait
  for i in $(seq "$1"); do [ "$(cat "$work/got.$i")" = "$bytes" ] || { echo "short download" >&2; exit 1; }; done
  echo "$(now) - $t" | bc
}
start_scraper() {
  ( while true; do get -o /dev/null "$url/metrics"; get -o /dev/null "$url/"; sleep 1; done ) &
  scraper_pid=$!
}
stop_scraper() { kill "$scraper_pid" 2>/dev/null; wait "$scraper_pid" 2>/dev/null || true; scraper_pid=; }

echo "work dir: $work; file: $((bytes / 1048576)) MiB; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(node --version)"
a1=999 b1=999 a4=999 b4=999 acpu=0 bcpu=0 atime=0 btime=0
for _ in $(seq "$rounds"); do
  c=$(cpu_ticks $serve_pid); t=$(download 1); acpu=$((acpu + $(cpu_ticks $serve_pid) - c)); a1=$(min "$t" "$a1"); atime=$(echo "$atime + $t" | bc)
  start_scraper
  c=$(cpu_ticks $serve_pid); t=$(download 1); bcpu=$((bcpu + $(cpu_ticks $serve_pid) - c)); b1=$(min "$t" "$b1"); btime=$(echo "$btime + $t" | bc)
  stop_scraper
  c=$(cpu_ticks $serve_pid); t=$(download 4); acpu=$((acpu + $(cpu_ticks $serve_pid) - c)); a4=$(min "$t" "$a4"); atime=$(echo "$atime + $t" | bc)
  start_scraper
  c=$(cpu_ticks $serve_pid); t=$(download 4); bcpu=$((bcpu + $(cpu_ticks $serve_pid) - c)); b4=$(min "$t" "$b4"); btime=$(echo "$btime + $t" | bc)
  stop_scraper
done
gib=$(echo "scale=6; $rounds * 5 * $bytes / 1073741824" | bc)
downloaded=$((rounds * 10 * bytes))
counted=$(get "$url/metrics" | awk '$1 == "depotkit_file_bytes_sent_total" {printf "%.0f", $2}')
mib=$((bytes / 1048576))
rate() { echo "scale=1; $1 * $mib / $2" | bc; }
ratio() { echo "scale=3; $2 / $1" | bc; }
printf '\n| measurement | without scraper | with /metrics and / every second | ratio (with/without) |\n|---|---|---|---|\n'
printf '| one download, MiB/s | %s | %s | %s |\n' "$(rate 1 "$a1")" "$(rate 1 "$b1")" "$(ratio "$b1" "$a1")"
printf '| 4 concurrent, MiB/s total | %s | %s | %s |\n' "$(rate 4 "$a4")" "$(rate 4 "$b4")" "$(ratio "$b4" "$a4")"
cpu() { echo "scale=3; $1 / $hz / $gib" | bc; }
printf '| server CPU s/GiB (all downloads) | %s | %s | %s |\n' "$(cpu $acpu)" "$(cpu $bcpu)" "$(echo "scale=3; $bcpu / $acpu" | bc)"
echo "scrapes: about $(printf '%.0f' "$btime") (one a second during $(printf '%.1f' "$btime") s of downloads)"
echo
echo "bytes downloaded: $downloaded; depotkit_file_bytes_sent_total: $counted"
[ "$counted" = "$downloaded" ] || { echo "the byte counter does not match the downloads" >&2; exit 1; }
