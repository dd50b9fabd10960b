#!/usr/bin/env bash
# Benchmark: esx mirror of an ESX depot (VIBS VIBs of 64 KiB to 4 MiB, spread on a log scale) from
# nginx over TLS on 127.0.0.1, against `rclone copy` over its HTTP backend and `wget --mirror` (nginx
# lists the folders for them), each of those followed by `sha256sum -c` against the metadata's
# checksums, so that every side ends with verified bytes, flushed (sync). Then `esx verify --deep` of
# the source depot against `sha256sum -c` of its VIBs. Every measurement alternates with the others,
# ROUNDS times, each mirror into an empty folder; medians of wall time and CPU seconds (user+sys of
# the client and its children; nginx's own CPU is not counted).
# Usage:
#   [ROUNDS=n] [VIBS=n] [CONCURRENCY=n] [CEILING=1] [DEPOTKIT_CLI=path/to/main.js] scripts/bench/esx-mirror.sh [work dir]
# CEILING=1 adds a bare client (esx-ceiling.mjs: two threads of TLS, no checks, no flushing) as the
# most any Node client reaches here.
# Run `npm run build` first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node ${DEPOTKIT_CLI:-$repo/dist/cli/main.js}"
vibs=${VIBS:-5000}
rounds=${ROUNDS:-3}
concurrency=${CONCURRENCY:-4}
work=$(mktemp -d "${1:-/var/tmp}/depotkit-bench-esx-mirror-XXXXXX")
nginx_pid=
trap '[ -n "$nginx_pid" ] && kill $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT

# The depot, and the "sha256  path" list of its VIBs as its metadata states them.
cat >"$work/setup.mts" <<TS
import { writeFileSync } from 'node:fs';
import { makeEsxDemo } from '$repo/src/esx/demo.js';
import { readEsxMetadata } from '$repo/src/esx/metadata-zip.js';
import { readFileSync } from 'node:fs';
const dir = '$work/site/umds-patch-store';
const demo = await makeEsxDemo(dir, { vibs: $vibs, vibSize: 64 * 1024, vibSizeMax: 4 * 1024 ** 2 });
const metadata = await readEsxMetadata(readFileSync(\`\${dir}/\${demo.metadata}\`), demo.metadata);
writeFileSync('$work/vibs.sha256', metadata.vibs.map((v) => \`\${v.sha256}  \${v.path}\n\`).join(''));
console.log(\`\${demo.vibs} VIBs, \${(demo.bytes / 1024 ** 3).toFixed(2)} GiB\`);
TS
depot=$(cd "$repo" && npx tsx "$work/setup.mts")

$cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
$cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
ca=$work/pki/ca/ca-cert.pem
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx/tmp"
t=$work/nginx/tmp
cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $t; proxy_temp_path $t; fastcgi_temp_path $t; uwsgi_temp_path $t; scgi_temp_path $t;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $work/pki/server/server-chain.pem; ssl_certificate_key $work/pki/server/server-key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    root $work/site;
    location / { autoindex on; }
  }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
base=https://localhost:$port/umds-patch-store

declare -A wall cpu
# Runs a shell command under /usr/bin/time; records its wall time and CPU seconds (user+sys, children included).
measure() { # name command
  /usr/bin/time -o "$work/time" -f '%e %U %S' bash -c "$2" >/dev/null 2>"$work/$1.err" || { echo "$1 failed:" >&2; cat "$work/$1.err" >&2; exit 1; }
  read -r w u s <"$work/time"
  wall[$1]="${wall[$1]:-} $w"
  cpu[$1]="${cpu[$1]:-} $(echo "$u + $s" | bc)"
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for _ in $(seq "$rounds"); do
  measure depotkit "$cli esx mirror $base/index.xml --out $work/out --ca $ca --concurrency $concurrency --json >$work/depotkit.json && sync"
  [ "$(jq .ok "$work/depotkit.json")" = true ] || { echo "the depotkit mirror failed" >&2; exit 1; }
  rm -rf "$work/out"; sync
  measure rclone "rclone copy -q --http-url $base/ :http: $work/out --ca-cert $ca --transfers $concurrency && (cd $work/out && sha256sum --quiet -c $work/vibs.sha256) && sync"
  rm -rf "$work/out"; sync
  measure wget "wget -q --mirror -np -nH --cut-dirs=1 -R 'index.html*' --ca-certificate=$ca -P $work/out $base/ && (cd $work/out && sha256sum --quiet -c $work/vibs.sha256) && sync"
  rm -rf "$work/out"; sync
  if [ -n "${CEILING:-}" ]; then
    measure ceiling "node $repo/scripts/bench/esx-ceiling.mjs $base $ca $work/vibs.sha256 $work/out && sync"
    rm -rf "$work/out"; sync
  fi
  measure verify "$cli esx verify --deep $work/site/umds-patch-store --json >/dev/null"
  measure sha256sum "cd $work/site/umds-patch-store && sha256sum --quiet -c $work/vibs.sha256"
done

echo "$depot; $rounds rounds alternated; concurrency $concurrency; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(node --version); $(rclone version | head -1); $(wget --version | head -1 | cut -d' ' -f1-3)"
printf '| measurement | wall s (median) [runs] | CPU s (median) | ratio (wall, this / the row it is compared with) |\n|---|---|---|---|\n'
row() { # name reference
  local m r=''
  m=$(median "${wall[$1]}")
  [ -n "${2:-}" ] && r=$(echo "scale=2; $m / $(median "${wall[$2]}")" | bc)
  printf '| %s | %s [%s] | %s | %s |\n' "$1" "$m" "$(echo "${wall[$1]}" | xargs)" "$(median "${cpu[$1]}")" "$r"
}
row depotkit; row rclone depotkit; row wget depotkit
[ -n "${CEILING:-}" ] && { row ceiling depotkit; row rclone ceiling; }
row verify; row sha256sum verify
