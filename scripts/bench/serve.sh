#!/usr/bin/env bash
# Benchmark: depotkit serve against nginx (Debian's nginx-light), same file, same certificate,
# same client (curl), over TLS on 127.0.0.1. Measures one 1 GiB download, 4 concurrent ones,
# server CPU seconds per GiB, and the peak memory (summed RSS of all server processes) with 16
# concurrent downloads; and the throughput of nginx running the site `depotkit export nginx`
# writes (Basic auth, the depot's TLS suites). Usage:
#   scripts/bench/serve.sh [file size, default 1G] [work dir, default a temp dir]
set -euo pipefail
size=${1:-1G}
work=${2:-$(mktemp -d /var/tmp/depotkit-serve-bench-XXXX)}
# mktemp makes the folder 0700; nginx's workers run as another user (nobody, or www-data) when
# the master runs as root, and must reach the files.
chmod 755 "$work"
repo=$(cd "$(dirname "$0")/../.." && pwd)
cli="node $repo/dist/cli/main.js"
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx_bin" ] || { echo "nginx is needed: apt-get install -y nginx-light" >&2; exit 2; }
now() { date +%s.%N; }
# Free ports, not fixed ones: other servers (other benchmarks) may run on this machine.
free_port() { node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
p_nginx=$(free_port); p_serve=$(free_port); p_serve1=$(free_port); p_exported=$(free_port)
hz=$(getconf CLK_TCK)

mkdir -p "$work/root/PROD/COMP/VCENTER" "$work/nginx" "$work/exported"
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

# n concurrent downloads of the file; prints the wall time in seconds; checks every byte count.
download() { # port n
  local t; t=$(now)
  for i in $(seq "$2"); do
    curl -sS --fail --cacert "$ca" -u bench:bench -o /dev/null -w '%{size_download}\n' "https://localhost:$1/$file" >"$work/got.$i" &
  done
  wait
  for i in $(seq "$2"); do [ "$(cat "$work/got.$i")" = "$bytes" ] || { echo "short download" >&2; exit 1; }; done
  echo "$(now) - $t" | bc
}

# Peak summed RSS while n downloads run.
peak_rss() { # pid port n
  local peak=0 r
  download "$2" "$3" >/dev/null &
  local d=$!
  while kill -0 $d 2>/dev/null; do r=$(rss_kb "$1"); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.05; done
  echo $((peak / 1024))
}

min() { echo "if ($1 < $2) $1 else $2" | bc; }
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
    ssl_protocols TLSv1.2 TLSv1.3;
    root $work/root;
  }
}
CONF
mkdir -p "$work/nginx/tmp"
# The site depotkit export writes, with Basic auth, in a main configuration like Debian's (conf.d/ included).
printf 'bench\n' >"$work/password"
$cli export nginx "$work/root" --out "$work/exported" --host 127.0.0.1 --port $p_exported --cert "$chain" --key "$key" \
  --user bench --password-file "$work/password" --force >/dev/null 2>&1
cat >"$work/exported/nginx.conf" <<CONF
$user_line
worker_processes auto;
pid $work/exported/nginx.pid;
error_log $work/exported/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/tmp; proxy_temp_path $work/nginx/tmp; fastcgi_temp_path $work/nginx/tmp;
  uwsgi_temp_path $work/nginx/tmp; scgi_temp_path $work/nginx/tmp;
  include $work/exported/depotkit.conf;
}
CONF
"$nginx_bin" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
"$nginx_bin" -c "$work/exported/nginx.conf" -g 'daemon off;' &
exported_pid=$!
$cli serve "$work/root" --host 127.0.0.1 --port $p_serve --cert "$chain" --key "$key" --json >"$work/serve.json" 2>/dev/null &
serve_pid=$!
trap 'kill $nginx_pid $exported_pid $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"pid"' "$work/serve.json" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
# Every server must serve the whole file before anything is measured (a 403 would measure nothing).
for port in $p_nginx $p_serve $p_exported; do
  got=$(curl -sS --cacert "$ca" -u bench:bench -o /dev/null -w '%{http_code} %{size_download}' "https://localhost:$port/$file" || true)
  [ "$got" = "200 $bytes" ] || { echo "the server on port $port answered \"$got\", not 200 with $bytes bytes; see $work/*/error.log" >&2; exit 1; }
done

echo "work dir: $work; file: $((bytes / 1048576)) MiB; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(node --version); $("$nginx_bin" -v 2>&1)"
# Runs alternate between the two servers, best of 3, so that load from elsewhere hits both alike.
n1=999 d1=999 e1=999 n4=999 d4=999 e4=999 ncpu=0 dcpu=0
for _ in 1 2 3; do
  n1=$(min "$(download $p_nginx 1)" "$n1"); d1=$(min "$(download $p_serve 1)" "$d1"); e1=$(min "$(download $p_exported 1)" "$e1")
  e4=$(min "$(download $p_exported 4)" "$e4")
  c=$(cpu_ticks $nginx_pid); n4=$(min "$(download $p_nginx 4)" "$n4"); ncpu=$((ncpu + $(cpu_ticks $nginx_pid) - c))
  c=$(cpu_ticks $serve_pid); d4=$(min "$(download $p_serve 4)" "$d4"); dcpu=$((dcpu + $(cpu_ticks $serve_pid) - c))
done
gib=$(echo "scale=6; 12 * $bytes / 1073741824" | bc)
mib=$((bytes / 1048576))
n1=$(echo "scale=1; $mib / $n1" | bc); d1=$(echo "scale=1; $mib / $d1" | bc)
n4=$(echo "scale=1; 4 * $mib / $n4" | bc); d4=$(echo "scale=1; 4 * $mib / $d4" | bc)
e1=$(echo "scale=1; $mib / $e1" | bc); e4=$(echo "scale=1; 4 * $mib / $e4" | bc)
ncpu=$(echo "scale=3; $ncpu / $hz / $gib" | bc); dcpu=$(echo "scale=3; $dcpu / $hz / $gib" | bc)
nrss=$(peak_rss $nginx_pid $p_nginx 16); drss=$(peak_rss $serve_pid $p_serve 16)
# The same with one serving process (no fork): the smallest footprint.
$cli serve "$work/root" --host 127.0.0.1 --port $p_serve1 --cert "$chain" --key "$key" --workers 1 --json >"$work/serve1.json" 2>/dev/null &
serve1_pid=$!
trap 'kill $nginx_pid $exported_pid $serve_pid $serve1_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '"pid"' "$work/serve1.json" 2>/dev/null && break; sleep 0.1; done
d1rss=$(peak_rss $serve1_pid $p_serve1 16)
ratio() { echo "scale=2; $1 / $2" | bc; }
printf '\n| measurement | depotkit | nginx | ratio (depotkit/nginx) |\n|---|---|---|---|\n'
printf '| one download, MiB/s | %s | %s | %s |\n' "$d1" "$n1" "$(ratio "$d1" "$n1")"
printf '| 4 concurrent, MiB/s total | %s | %s | %s |\n' "$d4" "$n4" "$(ratio "$d4" "$n4")"
printf '| server CPU s/GiB (4 concurrent) | %s | %s | %s |\n' "$dcpu" "$ncpu" "$(ratio "$dcpu" "$ncpu")"
printf '| peak RSS, 16 concurrent, MiB (all processes; default: a serving process per core) | %s | %s | %s |\n' "$drss" "$nrss" "$(ratio "$drss" "$nrss")"
printf '| peak RSS, 16 concurrent, MiB (--workers 1) | %s | %s | %s |\n' "$d1rss" "$nrss" "$(ratio "$d1rss" "$nrss")"
printf '\n| measurement | nginx with the exported site | nginx by hand | ratio (exported/by hand) |\n|---|---|---|---|\n'
printf '| one download, MiB/s | %s | %s | %s |\n' "$e1" "$n1" "$(ratio "$e1" "$n1")"
printf '| 4 concurrent, MiB/s total | %s | %s | %s |\n' "$e4" "$n4" "$(ratio "$e4" "$n4")"
