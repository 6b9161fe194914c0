#!/usr/bin/env bash
# Load test of `mco server` against nginx serving the identical response bytes, both over TLS
# on 127.0.0.1. Needs: go, wrk, nginx, openssl, curl (apt-get install wrk nginx-light).
# Usage: bench/mcs/run.sh [duration]   (default 15s)
set -euo pipefail

DURATION=${1:-15s}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/mcs-bench.XXXXXX)
chmod 755 "$WORK" # nginx workers run as www-data
MCS_PORT=22623
NGINX_PORT=22643
ACCEPT='Accept: application/vnd.coreos.ignition+json;version=3.4.0'
WRK=(wrk -t2 -c64 -d"$DURATION" --timeout 30s --latency -H "$ACCEPT")
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

for tool in go wrk nginx openssl curl; do
	command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install wrk nginx-light)" >&2; exit 1; }
done

echo "== building mco and the fixture in $WORK"
(cd "$REPO" && go build -o "$WORK/mco" ./cmd/mco && go run ./bench/mcs/fixture "$WORK/bootstrap")
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null

# summarize NAME WRK_OUTPUT PID: prints req/s, p50, p99 and peak RSS.
summarize() {
	local name=$1 out=$2 pid=$3
	local rps p50 p99 rss
	rps=$(awk '/Requests\/sec/ {print $2}' "$out")
	p50=$(awk '$1 == "50%" {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	rss=$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status")
	errors=$(grep -E 'Non-2xx|Socket errors' "$out" || true)
	printf '%-6s %10s req/s   p50 %-9s p99 %-9s peak RSS %s %s\n' "$name" "$rps" "$p50" "$p99" "$rss" "$errors"
	echo "$rps" >"$WORK/$name.rps"
}

echo "== mco server (bootstrap mode, audit log to $WORK/mco.log)"
"$WORK/mco" server --bootstrap-dir "$WORK/bootstrap" --bind-address 127.0.0.1 --secure-port $MCS_PORT \
	--insecure-port 0 --metrics-bind-address "" --tls-cert-file "$WORK/tls.crt" \
	--tls-private-key-file "$WORK/tls.key" 2>"$WORK/mco.log" &
mco_pid=$!
pids+=("$mco_pid")
for _ in $(seq 100); do
	curl -skf -H "$ACCEPT" -o "$WORK/worker.json" "https://127.0.0.1:$MCS_PORT/config/worker" && break
	sleep 0.1
done
bytes=$(stat -c %s "$WORK/worker.json")
echo "response: $bytes bytes (spec 3.4.0)"
"${WRK[@]}" "https://127.0.0.1:$MCS_PORT/config/worker" >"$WORK/wrk-mco.txt"
summarize mco "$WORK/wrk-mco.txt" "$mco_pid"
kill "$mco_pid"

echo "== nginx serving the same bytes"
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes auto;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log $WORK/nginx/access.log;
	client_body_temp_path $WORK/nginx;
	proxy_temp_path $WORK/nginx;
	fastcgi_temp_path $WORK/nginx;
	uwsgi_temp_path $WORK/nginx;
	scgi_temp_path $WORK/nginx;
	server {
		listen 127.0.0.1:$NGINX_PORT ssl;
		ssl_certificate $WORK/tls.crt;
		ssl_certificate_key $WORK/tls.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		location = /config/worker { default_type application/json; alias $WORK/worker.json; }
	}
}
CONF
nginx -c "$WORK/nginx/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
for _ in $(seq 100); do
	curl -skf -o /dev/null "https://127.0.0.1:$NGINX_PORT/config/worker" && break
	sleep 0.1
done
"${WRK[@]}" "https://127.0.0.1:$NGINX_PORT/config/worker" >"$WORK/wrk-nginx.txt"
# nginx's master forks the workers that serve; report their summed peak RSS.
nginx_rss=0
for w in $(pgrep -P "$nginx_pid"); do
	nginx_rss=$((nginx_rss + $(awk '/VmHWM/ {print $2}' "/proc/$w/status")))
done
summarize nginx "$WORK/wrk-nginx.txt" "$nginx_pid"
echo "       (nginx workers' summed peak RSS: $((nginx_rss / 1024)) MiB)"

awk -v m="$(cat "$WORK/mco.rps")" -v n="$(cat "$WORK/nginx.rps")" 'BEGIN { printf "ratio mco/nginx: %.2f\n", m / n }'
echo "raw wrk output: $WORK/wrk-mco.txt $WORK/wrk-nginx.txt"
