#!/usr/bin/env bash
# Benchmark: a CA (RSA 3072) plus a server certificate (RSA 2048, SAN, server profile)
# made by depotkit against the equivalent openssl commands (req -x509, then req + x509 -req),
# alternating, N rounds each. RSA key generation time varies a lot from one key to the
# next (prime search), so means over many rounds are compared. Usage:
#   scripts/bench/pki.sh [rounds, default 20]
# Needs a build (npm run build).
set -euo pipefail
rounds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="node $root/dist/cli/main.js"
work=$(mktemp -d /tmp/depotkit-bench-pki-XXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
host=depot.lab.local

cat >"$work/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
subjectAltName=DNS:$host,IP:10.0.0.5
EXT

dk_total=0; os_total=0
for i in $(seq 1 "$rounds"); do
  d="$work/dk$i"
  t=$(now)
  $cli cert ca --out "$d/ca" --key-size 3072 >/dev/null
  $cli cert issue --ca "$d/ca" --dns $host --ip 10.0.0.5 --out "$d/srv" >/dev/null
  dk_total=$(echo "$dk_total + $(now) - $t" | bc)

  o="$work/os$i"; mkdir -p "$o"
  t=$(now)
  openssl req -x509 -newkey rsa:3072 -nodes -keyout "$o/ca-key.pem" -out "$o/ca-cert.pem" -sha256 -days 3650 \
    -subj "/CN=depotkit private CA" -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes -keyout "$o/server-key.pem" -out "$o/server.csr" -subj "/CN=$host" 2>/dev/null
  openssl x509 -req -in "$o/server.csr" -CA "$o/ca-cert.pem" -CAkey "$o/ca-key.pem" -CAcreateserial -days 825 -sha256 \
    -extfile "$work/server.ext" -out "$o/server-cert.pem" 2>/dev/null
  os_total=$(echo "$os_total + $(now) - $t" | bc)

  # Both results must be valid for the comparison to mean anything.
  openssl verify -x509_strict -CAfile "$d/ca/ca-cert.pem" "$d/srv/server-cert.pem" >/dev/null
  openssl verify -x509_strict -CAfile "$o/ca-cert.pem" "$o/server-cert.pem" >/dev/null
  rm -rf "$d" "$o"
done

# The library alone, without process start-up: same work, in one Node process.
lib_mean=$(node --input-type=module -e "
import { createCa, issueServerCert } from '$root/dist/cert/index.js';
const n = $rounds; const t = performance.now();
for (let i = 0; i < n; i++) { const ca = await createCa({ keySize: 3072 }); await issueServerCert(ca, { dns: ['$host'], ips: ['10.0.0.5'] }); }
console.log(((performance.now() - t) / n / 1000).toFixed(3));
")
startup=$( { t=$(now); node -e '' ; echo "$(now) - $t" | bc; } )

dk_mean=$(echo "scale=3; $dk_total / $rounds" | bc)
os_mean=$(echo "scale=3; $os_total / $rounds" | bc)
printf '\n%s rounds; RSA 3072 CA + RSA 2048 server certificate\n\n' "$rounds"
printf '| measurement | depotkit (s) | openssl (s) | ratio (openssl/depotkit) |\n|---|---|---|---|\n'
printf '| CLI: cert ca + cert issue vs req -x509 + req + x509 -req, mean | %.3f | %.3f | %s |\n' "$dk_mean" "$os_mean" "$(echo "scale=2; $os_mean / $dk_mean" | bc)"
printf '| library: createCa + issueServerCert in one process, mean | %.3f | %.3f | %s |\n' "$lib_mean" "$os_mean" "$(echo "scale=2; $os_mean / $lib_mean" | bc)"
printf '| node start-up alone (node -e "") | %.3f | | |\n' "$startup"
