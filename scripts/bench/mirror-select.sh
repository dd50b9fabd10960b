#!/usr/bin/env bash
# Benchmark: depot mirror of one release (--release 9.0.1.0) of a depot holding three, against the
# full mirror of the same depot, over TLS on 127.0.0.1 from depotkit serve: bytes downloaded and wall
# time, the two alternated ROUNDS times (each into an empty folder).
# Usage:
#   [ROUNDS=n] [DEPOTKIT_CLI=path/to/main.js] scripts/bench/mirror-select.sh [binary size, default 32M] [work dir]
# The depot: a 9.0 demo (16 binaries) plus releases 9.0.1.0 and 9.0.2.0 of five components each
# (26 binaries of the given size). Run `npm run build` first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node ${DEPOTKIT_CLI:-$repo/dist/cli/main.js}"
size=${1:-32M}
rounds=${ROUNDS:-2}
work=$(mktemp -d "${2:-/var/tmp}/depotkit-bench-mirror-select-XXXXXX")
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
serve_pid=
trap '[ -n "$serve_pid" ] && kill $serve_pid 2>/dev/null; rm -rf "$work"' EXIT

$cli depot demo "$work/depot" --binary-size "$size" --force --json >/dev/null
# Two patch releases: new binaries listed in the catalog under their versions, and in the manifest.
node --input-type=module - "$work/depot" <<'JS'
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
const root = process.argv[2];
const catalogPath = `${root}/PROD/metadata/productVersionCatalog/v1/productVersionCatalog.json`;
const catalog = JSON.parse(readFileSync(catalogPath, 'utf8'));
const size = statSync(`${root}/PROD/COMP/VCENTER/${catalog.patches.VCENTER[0].artifacts.bundles[0].binaries[0].fileName}`).size;
for (const [r, release] of ['9.0.1.0', '9.0.2.0'].entries())
  for (const component of ['VCENTER', 'NSX_T_MANAGER', 'ESX_HOST', 'SDDC_MANAGER_VCF', 'VROPS']) {
    const productVersion = `${release}.${25000000 + r}`;
    const fileName = `${component.toLowerCase()}-${productVersion}.bin`;
    const hash = createHash('sha256');
    const chunk = 8 << 20;
    const path = `${root}/PROD/COMP/${component}/${fileName}`;
    writeFileSync(path, '');
    for (let done = 0; done < size; done += chunk) {
      const data = randomBytes(Math.min(chunk, size - done));
      hash.update(data);
      writeFileSync(path, data, { flag: 'a' });
    }
    catalog.patches[component].push({
      productVersion,
      artifacts: { bundles: [{ name: `bundle-${component}-${release}`, type: 'PATCH', binaries: [{ fileName, size, checksum: hash.digest('hex') }] }] },
    });
  }
writeFileSync(catalogPath, `${JSON.stringify(catalog, null, 2)}\n`);
JS

$cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
$cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
ca=$work/pki/ca/ca-cert.pem
printf 'bench\n' >"$work/password"
chmod 600 "$work/password"
$cli serve "$work/depot" --host 127.0.0.1 --port 0 --cert "$work/pki/server/server-chain.pem" --key "$work/pki/server/server-key.pem" \
  --user bench --password-file "$work/password" --json >"$work/serve.json" 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do grep -q '"url"' "$work/serve.json" 2>/dev/null && break; sleep 0.1; done
url=$(jq -r .url "$work/serve.json" | sed 's/127.0.0.1/localhost/')

declare -A runs bytes
record() { runs[$1]="${runs[$1]:-} $2"; }
mirror() { # name extra-args...
  local name=$1; shift
  rm -rf "$work/mirror"; sync
  local t; t=$(now)
  $cli depot mirror "$url" --out "$work/mirror" --ca "$ca" --user bench --password-file "$work/password" "$@" --json >"$work/mirror.json" || true
  record "$name" "$(elapsed "$t")"
  [ "$(jq .ok "$work/mirror.json")" = true ] || { echo "the $name mirror failed" >&2; exit 1; }
  bytes[$name]="$(jq .bytesDownloaded "$work/mirror.json") bytes in $(jq '.downloaded | length' "$work/mirror.json") binaries"
}
for _ in $(seq "$rounds"); do
  mirror one --release 9.0.1.0
  mirror full
done
echo "binary size $size, $rounds rounds alternated; $(nproc) cores; $(node --version)"
for name in one full; do
  echo "$name: ${bytes[$name]}; seconds:$(echo "${runs[$name]}" | xargs printf ' %.2f')"
done
