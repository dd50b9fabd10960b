#!/usr/bin/env bash
# Benchmark: depot pack and unpack against tar, split, cat and sha256sum on the same depot, and
# depot mirror against curl and wget fetching the same files one after another, over TLS on
# 127.0.0.1 from depotkit serve. Each measurement alternates with its reference, ROUNDS times
# (default 2); the best of each is reported, every run in brackets. Usage:
#   [ROUNDS=n] [PARTS=all|mirror] [DEPOTKIT_CLI=path/to/main.js] scripts/bench/transfer.sh [binary size, default 512M] [work dir]
# A 9.0 demo depot has 16 binaries: 512M makes 8 GiB. The work dir (a temp dir under /var/tmp by
# default) needs three times that free. DEPOTKIT_CLI: another build of the CLI (e.g. of a commit).
# PARTS=mirror: only the mirror, with the bounds it runs into (the disk alone, the transfer alone).
set -euo pipefail
size=${1:-512M}
work=${2:-$(mktemp -d /var/tmp/depotkit-transfer-bench-XXXX)}
rounds=${ROUNDS:-2}
parts=${PARTS:-all}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node ${DEPOTKIT_CLI:-$repo/dist/cli/main.js}"
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
volume=$((4 * 1024 * 1024 * 1024 - 512)) # the fat32 default, for both sides
serve_pid=
trap '[ -n "$serve_pid" ] && kill $serve_pid 2>/dev/null; rm -rf "$work"' EXIT
declare -A runs
record() { runs[$1]="${runs[$1]:-} $2"; }
best() { echo "${runs[$1]}" | tr ' ' '\n' | grep . | sort -g | head -1; }
all() { echo "${runs[$1]}" | xargs printf '%.1f ' | sed 's/ $//'; }

echo "work dir: $work, binary size: $size, $rounds rounds; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(node --version); $(tar --version | head -1); $(curl --version | head -1 | cut -d' ' -f1-2); $(wget --version | head -1 | cut -d' ' -f1-3)"
$cli depot demo "$work/depot" --binary-size "$size" --force --json >/dev/null
total=$(du -sb "$work/depot/PROD" | cut -f1)
echo "$(find "$work/depot/PROD" -type f | wc -l) files, $((total / 1048576)) MiB"
warm() { find "$work/depot/PROD" -type f -exec cat {} + >/dev/null; }

# The pack's volumes opened by hand, as its README.txt says: every volume with tar, parts joined with cat.
untar() { # pack-dir out-dir
  mkdir -p "$2"
  for v in "$1"/depot-*.tar; do tar -xf "$v" -C "$2"; done
  (cd "$2" && find . -name '*.part-0001' | while read -r p; do f=${p%.part-0001}; cat "$f".part-* >"$f" && rm "$f".part-*; done)
}

for round in $(seq "$rounds"); do
  [ "$parts" = mirror ] && break
  # ---- pack: volumes, the SHA-256 of every file and of every volume, flushed to disk.
  rm -rf "$work/pack"; warm; sync
  t=$(now); $cli depot pack "$work/depot" --out "$work/pack" --json >/dev/null; record pack "$(elapsed "$t")"
  # By hand: checksums of the files, tar cut into volumes, checksums of the volumes, sync.
  mkdir -p "$work/ref"; warm; sync
  t=$(now)
  (cd "$work/depot" && find PROD -type f -print0 | sort -z | xargs -0 sha256sum >"$work/ref/files.sha256")
  (cd "$work/depot" && tar -cf - PROD) | split -b "$volume" -d -a 3 - "$work/ref/vol-"
  (cd "$work/ref" && sha256sum vol-* >SHA256SUMS)
  sync; record refpack "$(elapsed "$t")"
  # Without the checksums of the files (one reading of the data fewer).
  rm -rf "$work/ref"; mkdir "$work/ref"; warm; sync
  t=$(now); (cd "$work/depot" && tar -cf - PROD) | split -b "$volume" -d -a 3 - "$work/ref/vol-"; (cd "$work/ref" && sha256sum vol-* >SHA256SUMS); sync; record refpackmin "$(elapsed "$t")"
  rm -rf "$work/ref"; sync

  # ---- unpack: every volume and every file checked, files placed, depot verify at the end.
  # The reference opens the same pack with tar, cat and sha256sum.
  t=$(now); $cli depot unpack "$work/pack" --out "$work/out" --json >/dev/null; record unpack "$(elapsed "$t")"
  t=$(now); $cli depot unpack "$work/pack" --out "$work/out" --json >/dev/null; record reunpack "$(elapsed "$t")"
  rm -rf "$work/out"; sync
  t=$(now)
  (cd "$work/pack" && sha256sum --quiet -c SHA256SUMS)
  untar "$work/pack" "$work/refout"
  (cd "$work/refout" && sha256sum --quiet -c "$work/pack/depot-files.sha256")
  sync; record refunpack "$(elapsed "$t")"
  rm -rf "$work/refout"; sync
  t=$(now); (cd "$work/pack" && sha256sum --quiet -c SHA256SUMS); untar "$work/pack" "$work/refout"; sync; record refunpackmin "$(elapsed "$t")"
  rm -rf "$work/refout"; sync
done
rm -rf "$work/pack"; sync

# ---- mirror over TLS from depotkit serve on 127.0.0.1, with Basic auth.
$cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
$cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
ca=$work/pki/ca/ca-cert.pem
printf 'bench\n' >"$work/password"
chmod 600 "$work/password"
$cli serve "$work/depot" --host 127.0.0.1 --port 18543 --cert "$work/pki/server/server-chain.pem" --key "$work/pki/server/server-key.pem" \
  --user bench --password-file "$work/password" --json >"$work/serve.json" 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do grep -q '"url"' "$work/serve.json" 2>/dev/null && break; sleep 0.1; done
url=https://localhost:18543
# What a mirror fetches: the metadata and every binary the catalog names, with their checksums.
catalog=$work/depot/PROD/metadata/productVersionCatalog/v1/productVersionCatalog.json
jq -r '.patches | to_entries[] | .key as $c | .value[].artifacts.bundles[].binaries[] | "\(.checksum)  PROD/COMP/\($c)/\(.fileName)"' "$catalog" >"$work/binaries.sha256"
(cd "$work/depot" && find PROD -type f | grep -v -F -f <(cut -c67- "$work/binaries.sha256")) >"$work/metadata.list"
{ cat "$work/metadata.list"; cut -c67- "$work/binaries.sha256"; } >"$work/all.list"
sed "s|.*|url = \"$url/&\"\noutput = \"$work/curl/&\"|" "$work/all.list" >"$work/curl.config"
sed "s|.*|$url/&|" "$work/all.list" >"$work/wget.list"

for round in $(seq "$rounds"); do
  rm -rf "$work/mirror"; warm; sync
  t=$(now); $cli depot mirror "$url" --out "$work/mirror" --ca "$ca" --user bench --password-file "$work/password" --json >"$work/mirror.json"; record mirror "$(elapsed "$t")"
  [ "$(jq .ok "$work/mirror.json")" = true ] || { echo "the mirror failed: $(jq -c '.failed' "$work/mirror.json")" >&2; exit 1; }
  t=$(now); $cli depot mirror "$url" --out "$work/mirror" --ca "$ca" --user bench --password-file "$work/password" --json >/dev/null; record remirror "$(elapsed "$t")"
  rm -rf "$work/mirror"; warm; sync
  # curl, one file after another on one connection, then flushed; then the checksums.
  t=$(now); curl -sS --fail --create-dirs --cacert "$ca" -u bench:bench -K "$work/curl.config"; sync; c=$(elapsed "$t"); record curl "$c"
  t=$(now); (cd "$work/curl" && sha256sum --quiet -c "$work/binaries.sha256"); record curlsha "$(echo "$c + $(elapsed "$t")" | bc)"
  rm -rf "$work/curl"; warm; sync
  t=$(now); wget -q --ca-certificate="$ca" --user=bench --password=bench -x -nH -P "$work/wget" -i "$work/wget.list"; sync; w=$(elapsed "$t"); record wget "$w"
  t=$(now); (cd "$work/wget" && sha256sum --quiet -c "$work/binaries.sha256"); record wgetsha "$(echo "$w + $(elapsed "$t")" | bc)"
  rm -rf "$work/wget"; sync
  # The bounds: the disk alone (as many bytes written and flushed, nothing received), and the
  # transfer alone (curl into /dev/null: TLS and the server, nothing written).
  t=$(now); dd if=/dev/zero of="$work/disk" bs=1M count=$((total / 1048576)) conv=fsync status=none; record disk "$(elapsed "$t")"
  rm -f "$work/disk"; sync
  t=$(now); sed 's|^output = .*|output = "/dev/null"|' "$work/curl.config" | curl -sS --fail --cacert "$ca" -u bench:bench -K -; record curlnull "$(elapsed "$t")"
done

row() { # label ours ref
  if [ -n "${3:-}" ]; then
    printf '| %s | %.2f [%s] | %.2f [%s] | %s |\n' "$1" "$(best "$2")" "$(all "$2")" "$(best "$3")" "$(all "$3")" "$(echo "scale=2; $(best "$3") / $(best "$2")" | bc)"
  else
    printf '| %s | %.2f [%s] | | |\n' "$1" "$(best "$2")" "$(all "$2")"
  fi
}
printf '\n| measurement (best of %s, every run in brackets) | depotkit (s) | reference (s) | ratio (ref/depotkit) |\n|---|---|---|---|\n' "$rounds"
if [ "$parts" != mirror ]; then
  row 'pack vs sha256sum of the files, tar \| split, sha256sum of the volumes, sync' pack refpack
  row 'pack vs tar \| split, sha256sum of the volumes, sync' pack refpackmin
  row 'unpack vs sha256sum -c SHA256SUMS, tar -x + cat, sha256sum -c of the files, sync' unpack refunpack
  row 'unpack vs sha256sum -c SHA256SUMS, tar -x + cat, sync' unpack refunpackmin
  row 'unpack re-run (all in place)' reunpack
fi
row 'mirror vs curl, one file after another, sync' mirror curl
row 'mirror vs curl, then sha256sum -c' mirror curlsha
row 'mirror vs wget -i, one file after another, sync' mirror wget
row 'mirror vs wget, then sha256sum -c' mirror wgetsha
row 'mirror re-run (all in place)' remirror
row 'mirror vs the disk alone: dd of as many bytes, fsync' mirror disk
row 'mirror vs the transfer alone: curl into /dev/null' mirror curlnull
