#!/usr/bin/env bash
# Load test of `mco server` against nginx serving the identical response bytes, both over TLS
# on 127.0.0.1. Needs: go, wrk, nginx, openssl, curl (apt-get install wrk nginx-light).
# Usage: bench/mcs/run.sh [-c CONNECTIONS] [-d DURATION] [--pprof] [DURATION]
#   -c  concurrent connections (default 64; bench/mcs/herd.sh runs 1000, a boot storm)
#   -d  how long wrk runs against each server (default 15s; a bare DURATION works too)
#   --pprof  build mco with -tags mcopprof and save CPU (over the run), heap and allocs
#            profiles of the server under load into the work directory
#   --binary PATH  serve with this mco binary instead of building one (to compare builds)
#   --mco-only  skip nginx (for profiling; the figures to compare come from full runs)
# Run it under flock /tmp/mco-bench.lock (the machine is shared; see README).
set -euo pipefail

CONNECTIONS=64
DURATION=15s
PPROF=false
NGINX=true
BINARY=
while [ $# -gt 0 ]; do
	case $1 in
	-c) CONNECTIONS=$2; shift 2 ;;
	-d) DURATION=$2; shift 2 ;;
	--pprof) PPROF=true; shift ;;
	--mco-only) NGINX=false; shift ;;
	--binary) BINARY=$2; shift 2 ;;
	-*) echo "unknown option $1" >&2; exit 2 ;;
	*) DURATION=$1; shift ;;
	esac
done
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/mcs-bench.XXXXXX)
chmod 755 "$WORK" # nginx workers run as www-data
MCS_PORT=22623
NGINX_PORT=22643
PPROF_ADDRESS=127.0.0.1:22626
TOKEN=bench-token-0123456789abcdef
ACCEPT='Accept: application/vnd.coreos.ignition+json;version=3.4.0'
AUTH="Authorization: Bearer $TOKEN"
# wrk opens every connection once, at the start, and keeps it alive: with -c1000 that is
# 1,000 TLS handshakes at once (a boot storm), then steady keep-alive serving.
WRK=(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --timeout 30s --latency -H "$ACCEPT" -H "$AUTH")
# One wrk connection is one descriptor here and one in the server.
ulimit -n "$(ulimit -Hn)"
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

for tool in go wrk nginx openssl curl; do
	command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install wrk nginx-light)" >&2; exit 1; }
done

echo "== building mco-server and the fixture in $WORK ($CONNECTIONS connections, $DURATION each)"
# The server build (tag mcoserver), which the server's DaemonSet runs, built as `make build`
# does: without cgo the binary maps fewer pages (no dynamic symbol table).
tags=(-tags mcoserver)
if $PPROF; then tags=(-tags mcoserver,mcopprof); fi
if [ -n "$BINARY" ]; then
	cp "$BINARY" "$WORK/mco"
else
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath "${tags[@]}" -o "$WORK/mco" ./cmd/mco)
fi
(cd "$REPO" && go run ./bench/mcs/fixture "$WORK/bootstrap")
printf 'worker:\n  token: %s\n' "$TOKEN" >"$WORK/tokens.yaml"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/tls.key" -out "$WORK/tls.crt" 2>/dev/null

# Peak RSS under load: each process's high-water mark is reset once it has served a request
# (start-up, e.g. reading the fixture, is not load), then sampled every 100 ms while wrk runs,
# summed over the processes (nginx's master and workers): the total and its anonymous part
# (heap, stacks, buffers; the rest is the executable's and libraries' file pages, shared and
# reclaimable, a fixed cost of the binary's size that load does not change).
watch_rss() {
	local out=$1; shift
	local pid total=0 anon=0 t a
	for pid in "$@"; do echo 5 >"/proc/$pid/clear_refs"; done
	while [ ! -e "$out.stop" ]; do
		read -r t a < <(for pid in "$@"; do cat "/proc/$pid/status" 2>/dev/null; done |
			awk '/^VmRSS/ {t += $2} /^RssAnon/ {a += $2} END {print t + 0, a + 0}')
		if ((t > total)); then total=$t; fi
		if ((a > anon)); then anon=$a; fi
		echo "$total $anon" >"$out"
		sleep 0.1
	done
	# The high-water marks catch a peak between two samples.
	t=$(for pid in "$@"; do awk '/^VmHWM/ {print $2}' "/proc/$pid/status"; done | awk '{t += $1} END {print t + 0}')
	if ((t > total)); then total=$t; fi
	echo "$total $anon" >"$out"
}

# summarize NAME WRK_OUTPUT RSS_FILE: prints req/s, p50, p99, max latency, errors and peak RSS.
summarize() {
	local name=$1 out=$2 rss total anon
	read -r total anon <"$3"
	local rps p50 p99 max errors
	rps=$(awk '/Requests\/sec/ {print $2}' "$out")
	p50=$(awk '$1 == "50%" {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	max=$(awk '$1 == "Latency" && NF >= 4 {print $4; exit}' "$out")
	# Socket errors (connect, read, write, timeout) plus non-2xx/3xx answers.
	errors=$(awk '/Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} /Non-2xx/ {n += $5} END {print n + 0}' "$out")
	printf '%-6s %10s req/s   p50 %-9s p99 %-9s max %-9s errors %-5s peak RSS %.1f MiB (anon %.1f)\n' \
		"$name" "$rps" "$p50" "$p99" "$max" "$errors" "$(awk -v k="$total" 'BEGIN {print k / 1024}')" \
		"$(awk -v k="$anon" 'BEGIN {print k / 1024}')"
	echo "$rps" >"$WORK/$name.rps"
}

# The rate limit is per client address and every wrk connection comes from 127.0.0.1, so it
# is raised out of the way; the limiter still runs (and costs) on every request, as it does
# for a fleet of distinct addresses that each ask once.
echo "== mco server (bootstrap mode, token required, audit log to $WORK/mco.log)"
MCO_PPROF_ADDRESS=$($PPROF && echo "$PPROF_ADDRESS" || true) \
	"$WORK/mco" server --bootstrap-dir "$WORK/bootstrap" --tokens-file "$WORK/tokens.yaml" \
	--bind-address 127.0.0.1 --secure-port $MCS_PORT --insecure-port 0 --metrics-bind-address "" \
	--rate-limit 1000000 --rate-limit-burst 1000000 \
	--tls-cert-file "$WORK/tls.crt" --tls-private-key-file "$WORK/tls.key" 2>"$WORK/mco.log" &
mco_pid=$!
pids+=("$mco_pid")
for _ in $(seq 100); do
	curl -skf -H "$ACCEPT" -H "$AUTH" -o "$WORK/worker.json" "https://127.0.0.1:$MCS_PORT/config/worker" && break
	sleep 0.1
done
bytes=$(stat -c %s "$WORK/worker.json")
echo "response: $bytes bytes (spec 3.4.0)"
profile_pid=
if $PPROF; then
	seconds=${DURATION%s}
	curl -sf -o "$WORK/cpu.pprof" "http://$PPROF_ADDRESS/debug/pprof/profile?seconds=$seconds" &
	profile_pid=$!
	# The heap and the runtime's memory figures half way through, with every connection open.
	(sleep $((seconds / 2))
	 curl -sf -o "$WORK/heap-load.pprof" "http://$PPROF_ADDRESS/debug/pprof/heap"
	 curl -sf -o "$WORK/memstats-load.txt" "http://$PPROF_ADDRESS/debug/pprof/heap?debug=1") &
fi
watch_rss "$WORK/mco.rss" "$mco_pid" &
watch_pid=$!
"${WRK[@]}" "https://127.0.0.1:$MCS_PORT/config/worker" >"$WORK/wrk-mco.txt"
touch "$WORK/mco.rss.stop"
wait "$watch_pid"
if $PPROF; then
	wait "$profile_pid" || echo "CPU profile failed" >&2
	curl -sf -o "$WORK/allocs.pprof" "http://$PPROF_ADDRESS/debug/pprof/allocs"
	echo "profiles: $WORK/{cpu,heap-load,allocs}.pprof (go tool pprof -top $WORK/mco FILE)," \
		"runtime memory under load: $WORK/memstats-load.txt"
fi
summarize mco "$WORK/wrk-mco.txt" "$WORK/mco.rss"
kill "$mco_pid"
$NGINX || exit 0

echo "== nginx serving the same bytes"
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes auto;
worker_rlimit_nofile 8192;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
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
# nginx's master forks the workers that serve; the master and the workers are summed.
# shellcheck disable=SC2046
watch_rss "$WORK/nginx.rss" "$nginx_pid" $(pgrep -P "$nginx_pid") &
watch_pid=$!
"${WRK[@]}" "https://127.0.0.1:$NGINX_PORT/config/worker" >"$WORK/wrk-nginx.txt"
touch "$WORK/nginx.rss.stop"
wait "$watch_pid"
summarize nginx "$WORK/wrk-nginx.txt" "$WORK/nginx.rss"
echo "       (nginx: master plus workers, summed)"

awk -v m="$(cat "$WORK/mco.rps")" -v n="$(cat "$WORK/nginx.rps")" 'BEGIN { printf "ratio mco/nginx req/s: %.2f\n", m / n }'
awk -v m="$(awk '$1 == "99%" {print $2}' "$WORK/wrk-mco.txt")" -v n="$(awk '$1 == "99%" {print $2}' "$WORK/wrk-nginx.txt")" '
	function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /m$/) return v * 60000; return v * 1000 }
	BEGIN { printf "ratio mco/nginx p99: %.2f\n", ms(m) / ms(n) }'
echo "raw wrk output: $WORK/wrk-mco.txt $WORK/wrk-nginx.txt"
