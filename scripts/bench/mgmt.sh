#!/usr/bin/env bash
# Benchmark: one whole certificate replacement on the management server
# simulator (session, CSR, signing, replace, wait for the restarted server to
# serve the new certificate, verify), done by `depotkit mgmt replace-cert` and
# by the hand-run curl + openssl sequence people use today, alternately, on
# the same simulator. Usage: scripts/bench/mgmt.sh [rounds, default 5] [restart-ms, default 500]
set -euo pipefail
rounds=${1:-5}
restart_ms=${2:-500}
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="node $root/dist/cli/main.js"
work=$(mktemp -d /tmp/depotkit-bench-mgmt-XXXX)
now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }

printf 'bench-password\n' >"$work/pw"
$cli cert ca --out "$work/ca" --json >/dev/null
$cli sim mgmt --password-file "$work/pw" --restart-ms "$restart_ms" --cert-out "$work/sim.pem" --json >"$work/sim.json" &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/sim.json" ] && break; sleep 0.1; done
url=$(sed -n 's/.*"url": "\(.*\)".*/\1/p' "$work/sim.json")
host=${url#https://}; host=${host%:*}; port=${url##*:}
cat "$work/sim.pem" "$work/ca/ca-cert.pem" >"$work/trust.pem"
user=administrator@vsphere.local
api=$url/api/vcenter/certificate-management/vcenter
lf_json() { sed ':a;N;$!ba;s/\n/\\n/g' "$1"; }

# The hand-run way: curl for the API, openssl to sign and to watch the restart.
by_hand() {
  local sid fp
  sid=$(curl -sf --cacert "$work/trust.pem" -u "$user:$(cat "$work/pw")" -X POST "$url/api/session" | tr -d '"')
  curl -sf --cacert "$work/trust.pem" -H "vmware-api-session-id: $sid" -H 'Content-Type: application/json' \
    -d '{"key_size": 2048, "common_name": "'"$host"'", "subject_alt_name": ["'"$host"'"]}' -X POST "$api/tls-csr" \
    | sed -n 's/.*"csr":"\(.*\)".*/\1/p' | sed 's/\\n/\n/g' >"$work/req.csr"
  printf 'subjectAltName=IP:%s\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' "$host" >"$work/ext.cnf"
  openssl x509 -req -in "$work/req.csr" -CA "$work/ca/ca-cert.pem" -CAkey "$work/ca/ca-key.pem" -days 730 \
    -extfile "$work/ext.cnf" -out "$work/hand.pem" 2>/dev/null
  fp=$(openssl x509 -in "$work/hand.pem" -noout -fingerprint -sha256)
  printf '{"cert": "%s", "root_cert": "%s"}' "$(lf_json "$work/hand.pem")" "$(lf_json "$work/ca/ca-cert.pem")" >"$work/put.json"
  curl -sf --cacert "$work/trust.pem" -H "vmware-api-session-id: $sid" -H 'Content-Type: application/json' \
    -X PUT --data-binary @"$work/put.json" "$api/tls" >/dev/null
  until [ "$(echo | openssl s_client -connect "$host:$port" 2>/dev/null | openssl x509 -noout -fingerprint -sha256 2>/dev/null)" = "$fp" ]; do sleep 0.1; done
  echo | openssl s_client -connect "$host:$port" -CAfile "$work/ca/ca-cert.pem" -verify_ip "$host" -verify_return_error >/dev/null 2>&1
}

by_depotkit() {
  $cli mgmt replace-cert --server "$url" --password-file "$work/pw" --ca "$work/ca" --server-ca "$work/trust.pem" \
    --key-size 2048 --json >/dev/null
}

dk_total=0; hand_total=0
for i in $(seq "$rounds"); do
  t=$(now); by_depotkit; dk=$(elapsed "$t"); dk_total=$(echo "$dk_total + $dk" | bc)
  t=$(now); by_hand; hand=$(elapsed "$t"); hand_total=$(echo "$hand_total + $hand" | bc)
  printf 'round %d: depotkit %.2f s, curl+openssl %.2f s\n' "$i" "$dk" "$hand"
done
printf '\n| measurement (restart %s ms, %s rounds) | depotkit (s) | curl + openssl (s) | ratio (ref/depotkit) |\n|---|---|---|---|\n' "$restart_ms" "$rounds"
printf '| one replacement, mean | %.2f | %.2f | %.2f |\n' "$(echo "$dk_total / $rounds" | bc -l)" "$(echo "$hand_total / $rounds" | bc -l)" "$(echo "$hand_total / $dk_total" | bc -l)"
