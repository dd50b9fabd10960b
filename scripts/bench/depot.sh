#!/usr/bin/env bash
# Benchmark: depot build (copy, hardlink) against cp, and depot verify --deep
# against sha256sum, on the same files in one run. Usage:
#   scripts/bench/depot.sh [binary-size, default 512M] [work dir, default a temp dir]
set -euo pipefail
size=${1:-512M}
work=${2:-$(mktemp -d /var/tmp/depotkit-bench-XXXX)}
cli="node $(cd "$(dirname "$0")/../.." && pwd)/dist/cli/main.js"
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
ratio() { echo "scale=2; $1 / $2" | bc; }

echo "work dir: $work, binary size: $size"
$cli depot demo "$work/src" --binary-size "$size" --force --json >/dev/null
mkdir -p "$work/meta" "$work/bins"
( cd "$work/src" && cp --parents -r PROD/metadata PROD/vsan PROD/COMP/SDDC_MANAGER_VCF/Compatibility "$work/meta/" )
find "$work/src/PROD/COMP" -type f ! -path '*/Compatibility/*' -exec cp -l {} "$work/bins/" \;
files=$(find "$work/bins" -type f | wc -l)
total=$(du -sb "$work/bins" | cut -f1)
echo "$files binaries, $((total / 1048576)) MiB"
cat "$work"/bins/* >/dev/null # warm the page cache for both sides alike

rm -rf "$work/cp"; mkdir "$work/cp"; sync
t=$(now); cp "$work"/bins/* "$work/cp/"; cp_s=$(elapsed "$t")
t=$(now); sync; sync_s=$(elapsed "$t"); cp_sync_s=$(echo "$cp_s + $sync_s" | bc)
rm -rf "$work/cp"; sync

rm -rf "$work/out-copy"
t=$(now); $cli depot build --metadata "$work/meta" --binaries "$work/bins" --out "$work/out-copy" --json >/dev/null; build_s=$(elapsed "$t")
t=$(now); $cli depot build --metadata "$work/meta" --binaries "$work/bins" --out "$work/out-copy" --json >/dev/null; rerun_s=$(elapsed "$t")
rm -rf "$work/out-copy"; sync

rm -rf "$work/out-link"
t=$(now); $cli depot build --metadata "$work/meta" --binaries "$work/bins" --out "$work/out-link" --mode hardlink --json >/dev/null; link_s=$(elapsed "$t")

t=$(now); (cd "$work/bins" && sha256sum * >/dev/null); sha_s=$(elapsed "$t")
t=$(now); $cli depot verify "$work/out-link" --deep --json >/dev/null; verify_s=$(elapsed "$t")

printf '\n| measurement | depotkit (s) | reference (s) | ratio (ref/depotkit) |\n|---|---|---|---|\n'
printf '| build --mode copy (kernel copy from the source opened once, the copy hashed, fsync) vs cp | %.2f | %.2f | %s |\n' "$build_s" "$cp_s" "$(ratio "$cp_s" "$build_s")"
printf '| build --mode copy vs cp + sync (same durability) | %.2f | %.2f | %s |\n' "$build_s" "$cp_sync_s" "$(ratio "$cp_sync_s" "$build_s")"
printf '| build re-run (all in place) | %.2f | | |\n' "$rerun_s"
printf '| build --mode hardlink | %.2f | | |\n' "$link_s"
printf '| verify --deep vs sequential sha256sum | %.2f | %.2f | %s |\n' "$verify_s" "$sha_s" "$(ratio "$sha_s" "$verify_s")"
rm -rf "$work"
