#!/usr/bin/env bash
# Benchmark: depotkit serve against nginx (Debian's nginx-light), same file, same certificate, same client (curl),
# over TLS 1.3 with TLS_AES_256_GCM_SHA384 forced on both sides, on 127.0.0.1. Usage:
#   scripts/bench/serve.sh [file size, default 1G] [work dir, default a temp dir]
# Environment: ROUNDS (default 3), NODE (the node that runs serve, default node), SERVE_ARGS (more serve options),
# VARIANTS (several serves in the same run, alternated with nginx and each other: their options separated by `;`, an
# empty entry for the defaults, e.g. VARIANTS=';--workers 1'; they are named serve1, serve2, ... in the tables),
# EXPORTED=1 (also nginx running the site `depotkit export nginx` writes).
#
# What is stable on a shared machine: the server's CPU seconds per GiB (user + system of every serving process, from
# /proc/<pid>/stat), which other processes' load does not move the way wall time moves. Wall throughput is printed
# beside it with the load average and the CPU time the hypervisor took (steal) during each run: on 2 cores the
# clients (curl decrypting costs about what the server encrypting costs) and everyone else compete with the server,
# so one download's wall time says more about the machine than about the server. Each figure is the median of
# ROUNDS rounds after a warm-up round; within a round the servers alternate, and the order flips every round.
# The client's CPU seconds per GiB (curl's user + system) are measured too: 1 / that is the most one curl can take in,
# whatever the server, which bounds what one download can show of the server.
set -euo pipefail
size=${1:-1G}
work=${2:-$(mktemp -d /var/tmp/depotkit-serve-bench-XXXX)}
rounds=${ROUNDS:-3}
node_bin=${NODE:-node}
# mktemp makes the folder 0700; nginx's workers run as another user (nobody, or www-data) when
# the master runs as root, and must reach the files.
chmod 755 "$work"
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node $repo/dist/cli/main.js"
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "nginx is needed: apt-get install -y nginx-light" >&2; exit 2; }
suite=TLS_AES_256_GCM_SHA384
now() { date +%s.%N; }
# Free ports, not fixed ones: other servers (other benchmarks) may run on this machine.
free_port() { node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
p_nginx=$(free_port); p_exported=$(free_port)
hz=$(getconf CLK_TCK)

mkdir -p "$work/root/PROD/COMP/VCENTER" "$work/nginx/tmp" "$work/exported"
: >"$work/serves"
file=PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso
[ -f "$work/root/$file" ] || head -c "$size" /dev/zero >"$work/root/$file"
bytes=$(stat -c %s "$work/root/$file")
cat "$work/root/$file" >/dev/null # page cache, for both servers alike
[ -f "$work/pki/ca/ca-cert.pem" ] || $cli cert ca --out "$work/pki/ca" --key-size 2048 --force >/dev/null
[ -f "$work/pki/server/server-chain.pem" ] || $cli cert issue --ca "$work/pki/ca" --dns localhost --ip 127.0.0.1 --out "$work/pki/server" --force >/dev/null
ca=$work/pki/ca/ca-cert.pem chain=$work/pki/server/server-chain.pem key=$work/pki/server/server-key.pem

# Every process of a server: the given pid and its children.
pids_of() { echo "$1" $(pgrep -P "$1" || true); }
cpu_ticks() { local t=0; for p in $(pids_of "$1"); do [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $t; }
rss_kb() { local t=0; for p in $(pids_of "$1"); do r=$(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0); t=$((t + ${r:-0})); done; echo $t; }
# The same with the executable's file pages counted once: every process maps the same binary (RssFile, about 41 MiB
# of node's), which the sum above counts once per process although it is in memory once.
once_kb() { local a=0 f=0 r; for p in $(pids_of "$1"); do
  read -r ra rf < <(awk '/RssAnon/ {a = $2} /RssFile/ {f = $2} END {print a + 0, f + 0}' /proc/$p/status 2>/dev/null || echo 0 0)
  a=$((a + ra)); [ "$rf" -gt "$f" ] && f=$rf; done; echo $((a + f)); }
# The machine's steal ticks (CPU time the hypervisor gave to other guests) and all ticks, from /proc/stat.
steal_all() { awk '/^cpu / {print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# n concurrent downloads from port; prints "wall-seconds server-cpu-ticks steal-percent load client-cpu-seconds";
# checks every byte count.
download() { # port pid n
  local t c s0 a0 s1 a1 l; l=$(load1); read -r s0 a0 < <(steal_all); c=$(cpu_ticks "$2"); t=$(now)
  for i in $(seq "$3"); do
    /usr/bin/time -f '%U %S' -o "$work/client.$i" curl -sS --fail --tlsv1.3 --tls13-ciphers "$suite" --cacert "$ca" -u bench:bench \
      -o /dev/null -w '%{size_download}\n' "https://localhost:$1/$file" >"$work/got.$i" &
  done
  wait
  t=$(echo "$(now) - $t" | bc); c=$(($(cpu_ticks "$2") - c)); read -r s1 a1 < <(steal_all)
  for i in $(seq "$3"); do [ "$(cat "$work/got.$i")" = "$bytes" ] || { echo "short download" >&2; exit 1; }; done
  echo "$t $c $(((s1 - s0) * 100 / (a1 - a0 + 1))) $l $(for i in $(seq "$3"); do cat "$work/client.$i"; done | awk '{s += $1 + $2} END {print s}')"
}

# Peak summed RSS while n downloads of the first PEAK_MIB (default 256) MiB run (the peak comes within seconds), and the
# peak with the binary counted once.
peak_rss() { # pid port n
  local peak=0 once=0 r i curls=()
  for i in $(seq "$3"); do
    curl -sS --fail --tlsv1.3 --tls13-ciphers "$suite" --cacert "$ca" -u bench:bench -o /dev/null -r "0-$((${PEAK_MIB:-256} * 1048576 - 1))" \
      "https://localhost:$2/$file" &
    curls+=($!)
  done
  while kill -0 "${curls[@]}" 2>/dev/null; do
    r=$(rss_kb "$1"); [ "$r" -gt "$peak" ] && peak=$r
    r=$(once_kb "$1"); [ "$r" -gt "$once" ] && once=$r
    sleep 0.05
  done
  echo "$((peak / 1024)) $((once / 1024))"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%s-%s", lo, hi}'; }

# As Debian's nginx.conf: workers run as www-data when the master runs as root.
user_line=$([ "$(id -u)" = 0 ] && echo 'user www-data;' || true)
cat >"$work/nginx/nginx.conf" <<CONF
$user_line
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $work/nginx/tmp; proxy_temp_path $work/nginx/tmp; fastcgi_temp_path $work/nginx/tmp;
  uwsgi_temp_path $work/nginx/tmp; scgi_temp_path $work/nginx/tmp;
  server {
    listen 127.0.0.1:$p_nginx ssl;
    ssl_certificate $chain; ssl_certificate_key $key;
    ssl_protocols TLSv1.3;
    ssl_conf_command Ciphersuites $suite;
    root $work/root;
  }
}
CONF
"$nginx_bin" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
pids=$nginx_pid
trap 'kill $pids 2>/dev/null || true' EXIT
servers="nginx:$p_nginx:$nginx_pid"
# One serve per variant (VARIANTS unset: one, with SERVE_ARGS alone), each started alone and measured idle before
# the next one starts.
IFS=';' read -r -a variants <<<"${VARIANTS-}"
[ -n "${VARIANTS+x}" ] || variants=('')
v=${VARIANTS-}; [ "$v" = "${v%;}" ] || variants+=('')
[ ${#variants[@]} -gt 0 ] || variants=('')
serves='' v=0
for args in "${variants[@]}"; do
  v=$((v + 1)); name=serve; [ -n "${VARIANTS+x}" ] && name=serve$v
  port=$(free_port)
  # shellcheck disable=SC2086
  $node_bin "$repo/dist/cli/main.js" serve "$work/root" --host 127.0.0.1 --port "$port" --cert "$chain" --key "$key" --json ${SERVE_ARGS:-} $args \
    >"$work/$name.json" 2>/dev/null &
  pid=$!
  pids="$pids $pid"
  for _ in $(seq 100); do grep -q '"pid"' "$work/$name.json" 2>/dev/null && break; sleep 0.1; done
  sleep 3
  echo "$name $port $pid $(rss_kb "$pid") $(once_kb "$pid") ${SERVE_ARGS:-} $args" >>"$work/serves"
  servers="$servers $name:$port:$pid"
  serves="$serves $name"
done
if [ "${EXPORTED:-}" = 1 ]; then
  # The site depotkit export writes, with Basic auth, in a main configuration like Debian's (conf.d/ included).
  printf 'bench\n' >"$work/password"
  $cli export nginx "$work/root" --out "$work/exported" --host 127.0.0.1 --port $p_exported --cert "$chain" --key "$key" \
    --user bench --password-file "$work/password" --force >/dev/null 2>&1
  printf '%s\nworker_processes auto;\npid %s;\nerror_log %s;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n  client_body_temp_path %s;\n  include %s;\n}\n' \
    "$user_line" "$work/exported/nginx.pid" "$work/exported/error.log" "$work/nginx/tmp" "$work/exported/depotkit.conf" >"$work/exported/nginx.conf"
  "$nginx_bin" -c "$work/exported/nginx.conf" -g 'daemon off;' &
  exported_pid=$!
  pids="$pids $exported_pid"
  servers="$servers exported:$p_exported:$exported_pid"
fi
# Every server must serve the whole file with the forced suite before anything is measured (a 403 would measure
# nothing); this is also the warm-up round: the file in the page cache, each server's code run once.
for s in $servers; do
  port=$(echo "$s" | cut -d: -f2)
  got=$(curl -sS --tlsv1.3 --tls13-ciphers "$suite" --cacert "$ca" -u bench:bench -o /dev/null -w '%{http_code} %{size_download}' "https://localhost:$port/$file" || true)
  [ "$got" = "200 $bytes" ] || { echo "the server on port $port answered \"$got\", not 200 with $bytes bytes; see $work/*/error.log" >&2; exit 1; }
  curl -sv --tlsv1.3 --tls13-ciphers "$suite" --cacert "$ca" -u bench:bench -o /dev/null -r 0-0 "https://localhost:$port/$file" 2>&1 | grep -q "TLSv1.3 / $suite" ||
    { echo "the server on port $port did not speak TLS 1.3 with $suite" >&2; exit 1; }
done

mib=$((bytes / 1048576))
openssl_rate=$(taskset -c 0 openssl speed -evp aes-256-gcm -bytes 16384 -seconds 2 2>/dev/null | awk '/^AES-256-GCM/ {print $NF}' | tr -d k)
cipher_s_gib=$(echo "scale=3; 1073741824 / ($openssl_rate * 1000)" | bc)
echo "work dir: $work; file: $mib MiB; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); serve on $($node_bin --version); $("$nginx_bin" -v 2>&1)"
awk '{printf "%s: serve", $1; for (i = 6; i <= NF; i++) printf " %s", $i; print ""}' "$work/serves"
echo "openssl speed -evp aes-256-gcm (16 KiB blocks, one core): $(echo "scale=2; $openssl_rate / 1000000" | bc) GB/s = $cipher_s_gib CPU s/GiB"
printf '\n| round | server | streams | wall s | MiB/s | server CPU s/GiB | client CPU s/GiB | steal %% | load |\n|---|---|---|---|---|---|---|---|---|\n'
: >"$work/runs"
order=$servers
for r in $(seq "$rounds"); do
  for n in 1 4; do
    for s in $order; do
      IFS=: read -r name port pid <<<"$s"
      read -r wall ticks steal load client < <(download "$port" "$pid" "$n")
      rate=$(echo "scale=1; $n * $mib / $wall" | bc)
      cpu=$(echo "scale=3; $ticks / $hz / ($n * $bytes / 1073741824)" | bc)
      client_cpu=$(echo "scale=3; $client / ($n * $bytes / 1073741824)" | bc)
      echo "$name $n $rate $cpu $client_cpu" >>"$work/runs"
      printf '| %s | %s | %s | %.2f | %s | %s | %s | %s | %s |\n' "$r" "$name" "$n" "$wall" "$rate" "$cpu" "$client_cpu" "$steal" "$load"
    done
  done
  # The next round starts with the other server, so that neither always runs right after the other's load.
  order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
done

# ROUNDS=0 measures memory only.
col() { awk -v s="$1" -v n="$2" -v c="$3" '$1 == s && $2 == n {print $c}' "$work/runs"; }
ratio() { echo "scale=2; $1 / $2" | bc; }
[ "$rounds" -gt 0 ] && printf '\nMedians of %s rounds (range in brackets); the cipher alone: %s CPU s/GiB on one core.\n' "$rounds" "$cipher_s_gib"
# The servers' own memory: nginx's peak first, then each serve's (idle from its start, peak in turn).
read -r nrss nonce < <(peak_rss $nginx_pid $p_nginx 16)
for name in $serves; do
  read -r _ port pid idle idle_once _ < <(awk -v s="$name" '$1 == s' "$work/serves")
  printf '\n| measurement | %s | nginx | ratio (%s/nginx) |\n|---|---|---|---|\n' "$name" "$name"
  for n in $([ "$rounds" -gt 0 ] && echo 1 4); do
    d=$(col "$name" $n 3 | median) g=$(col nginx $n 3 | median)
    printf '| %s, MiB/s | %s [%s] | %s [%s] | %s |\n' "$([ $n = 1 ] && echo 'one download' || echo '4 concurrent, total')" \
      "$d" "$(col "$name" $n 3 | range)" "$g" "$(col nginx $n 3 | range)" "$(ratio "$d" "$g")"
    d=$(col "$name" $n 4 | median) g=$(col nginx $n 4 | median)
    printf '| server CPU s/GiB, %s | %s [%s] | %s [%s] | %s |\n' "$([ $n = 1 ] && echo 'one download' || echo '4 concurrent')" \
      "$d" "$(col "$name" $n 4 | range)" "$g" "$(col nginx $n 4 | range)" "$(ratio "$d" "$g")"
    server_d=$d server_g=$g
    d=$(col "$name" $n 5 | median) g=$(col nginx $n 5 | median)
    printf '| client (curl) CPU s/GiB, %s | %s [%s] | %s [%s] | %s |\n' "$([ $n = 1 ] && echo 'one download' || echo '4 concurrent')" \
      "$d" "$(col "$name" $n 5 | range)" "$g" "$(col nginx $n 5 | range)" "$(ratio "$d" "$g")"
    # Server and clients share the cores: cores / (server + client CPU s/GiB) is the most the machine can move with
    # that server; one curl runs on one core, so for one download 1 / its CPU s/GiB bounds it too.
    ceiling() { echo "$1 $2" | awk -v n="$3" -v cores="$(nproc)" '{c = cores * 1024 / ($1 + $2); if (n == 1 && 1024 / $2 < c) c = 1024 / $2; printf "%d", c}'; }
    printf '| ceiling of this machine with this client, %s, MiB/s | %s | %s | %s |\n' "$([ $n = 1 ] && echo 'one download' || echo '4 concurrent')" \
      "$(ceiling "$server_d" "$d" $n)" "$(ceiling "$server_g" "$g" $n)" "$(ratio "$(ceiling "$server_d" "$d" $n)" "$(ceiling "$server_g" "$g" $n)")"
  done
  read -r drss donce < <(peak_rss "$pid" "$port" 16)
  printf '| RSS of every serving process, idle 3 s after start, MiB (binary counted once) | %s (%s) | | |\n' "$((idle / 1024))" "$((idle_once / 1024))"
  printf '| peak RSS, 16 concurrent downloads, MiB (binary counted once) | %s (%s) | %s (%s) | %s |\n' "$drss" "$donce" "$nrss" "$nonce" "$(ratio "$drss" "$nrss")"
  # Reads in the event loop that waited for the disk (each sent the process's reads to the pool for a while).
  slow=$(curl -sS --cacert "$ca" "https://localhost:$port/metrics" | awk '/^depotkit_slow_file_reads_total/ {print $2}')
  printf '| reads in the event loop that waited for the disk | %s | | |\n' "${slow:-none counted}"
done
if [ "${EXPORTED:-}" = 1 ]; then
  for n in 1 4; do printf '| nginx with the exported site, %s streams, MiB/s | | %s | |\n' "$n" "$(col exported $n 3 | median)"; done
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
