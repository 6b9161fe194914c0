#!/usr/bin/env bash
# Load test of `mco server` against nginx serving the identical response bytes, both over TLS
# on 127.0.0.1. Needs: go, wrk, nginx, openssl, curl (apt-get install wrk nginx-light).
# Usage: bench/mcs/run.sh [-c CONNECTIONS] [-d DURATION] [-r ROUNDS] [--pprof] [DURATION]
#   -c  concurrent connections (default 64; bench/mcs/herd.sh runs 1000, a boot storm)
#   -d  how long wrk runs against each server in each round (default 10s; a bare DURATION
#       works too)
#   -r  rounds (default 3): each round runs wrk against both servers, with fresh connections,
#       mco first in odd rounds and nginx first in even ones, so that both see the same drift
#       of the shared machine's load; the summary is the median of the rounds' ratios
#   --pprof  build mco with -tags mcopprof and save CPU (over the first round), heap and allocs
#            profiles of the server under load into the work directory
#   --binary PATH  serve with this mco binary instead of building one (to compare builds)
#   --mco-only  skip nginx (for profiling; the figures to compare come from full runs)
# Run it under flock /tmp/mco-bench.lock (the machine is shared; see README).
set -euo pipefail

CONNECTIONS=64
DURATION=10s
ROUNDS=3
PPROF=false
NGINX=true
BINARY=
while [ $# -gt 0 ]; do
	case $1 in
	-c) CONNECTIONS=$2; shift 2 ;;
	-d) DURATION=$2; shift 2 ;;
	-r) ROUNDS=$2; shift 2 ;;
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

# ms VALUE: wrk's latency (e.g. 850.12us, 12.3ms, 1.02s, 1.5m) in milliseconds.
ms() {
	awk -v v="$1" 'BEGIN { if (v ~ /us$/) print v / 1000; else if (v ~ /ms$/) print v + 0; else if (v ~ /m$/) print v * 60000; else print v * 1000 }'
}

# summarize NAME ROUND WRK_OUTPUT RSS_FILE: prints the round's req/s, p50, p99, max latency,
# errors and peak RSS, and appends "req/s p99-ms" to $WORK/NAME.rounds.
summarize() {
	local name=$1 round=$2 out=$3 total anon
	read -r total anon <"$4"
	local rps p50 p99 max errors
	rps=$(awk '/Requests\/sec/ {print $2}' "$out")
	p50=$(awk '$1 == "50%" {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	max=$(awk '$1 == "Latency" && NF >= 4 {print $4; exit}' "$out")
	# Socket errors (connect, read, write, timeout) plus non-2xx/3xx answers.
	errors=$(awk '/Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} /Non-2xx/ {n += $5} END {print n + 0}' "$out")
	printf '%-6s %-2s %10s req/s   p50 %-9s p99 %-9s max %-9s errors %-5s peak RSS %.1f MiB (anon %.1f)\n' \
		"$name" "$round" "$rps" "$p50" "$p99" "$max" "$errors" "$(awk -v k="$total" 'BEGIN {print k / 1024}')" \
		"$(awk -v k="$anon" 'BEGIN {print k / 1024}')"
	echo "$rps $(ms "$p99") $errors $total $anon" >>"$WORK/$name.rounds"
}

# load NAME ROUND URL PID...: one round of wrk against a server, its RSS watched.
load() {
	local name=$1 round=$2 url=$3 watch_pid
	shift 3
	rm -f "$WORK/$name.rss.stop"
	watch_rss "$WORK/$name.rss" "$@" &
	watch_pid=$!
	"${WRK[@]}" "$url" >"$WORK/wrk-$name-$round.txt"
	touch "$WORK/$name.rss.stop"
	wait "$watch_pid"
	summarize "$name" "$round" "$WORK/wrk-$name-$round.txt" "$WORK/$name.rss"
}

# The rate limit is per client address and every wrk connection comes from 127.0.0.1, so it
# is raised out of the way; the limiter still runs (and costs) on every request, as it does
# for a fleet of distinct addresses that each ask once.
echo "== mco-server (bootstrap mode, token required, audit log to $WORK/mco.log)"
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

nginx_pids=()
if $NGINX; then
	echo "== nginx serving the same bytes (master plus workers, summed)"
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
	# nginx's master forks the workers that serve.
	# shellcheck disable=SC2207
	nginx_pids=("$nginx_pid" $(pgrep -P "$nginx_pid"))
fi

if $PPROF; then
	ROUNDS=1
	seconds=${DURATION%s}
	curl -sf -o "$WORK/cpu.pprof" "http://$PPROF_ADDRESS/debug/pprof/profile?seconds=$seconds" &
	profile_pid=$!
	# The heap and the runtime's memory figures half way through, with every connection open.
	(sleep $((seconds / 2))
	 curl -sf -o "$WORK/heap-load.pprof" "http://$PPROF_ADDRESS/debug/pprof/heap"
	 curl -sf -o "$WORK/memstats-load.txt" "http://$PPROF_ADDRESS/debug/pprof/heap?debug=1") &
fi
echo "== $ROUNDS round(s) of wrk -c$CONNECTIONS -d$DURATION: mco then nginx in odd rounds, nginx then mco in even ones"
for round in $(seq "$ROUNDS"); do
	if $NGINX && ((round % 2 == 0)); then
		load nginx "$round" "https://127.0.0.1:$NGINX_PORT/config/worker" "${nginx_pids[@]}"
	fi
	load mco "$round" "https://127.0.0.1:$MCS_PORT/config/worker" "$mco_pid"
	if $NGINX && ((round % 2 == 1)); then
		load nginx "$round" "https://127.0.0.1:$NGINX_PORT/config/worker" "${nginx_pids[@]}"
	fi
done
if $PPROF; then
	wait "$profile_pid" || echo "CPU profile failed" >&2
	curl -sf -o "$WORK/allocs.pprof" "http://$PPROF_ADDRESS/debug/pprof/allocs"
	echo "profiles: $WORK/{cpu,heap-load,allocs}.pprof (go tool pprof -top $WORK/mco FILE)," \
		"runtime memory under load: $WORK/memstats-load.txt"
fi
$NGINX || exit 0

# The summary: the median over rounds of each round's mco/nginx ratio, the range, errors in
# all, and the highest peak RSS of any round.
paste -d' ' "$WORK/mco.rounds" "$WORK/nginx.rounds" | awk '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		n++; rps[n] = $1 / $6; p99[n] = $2 / $7; errs += $3 + $8
		if ($4 > mt) mt = $4; if ($5 > ma) ma = $5; if ($9 > nt) nt = $9; if ($10 > na) na = $10
		list_r = list_r sprintf("%s%.2f", n > 1 ? " " : "", rps[n]); list_p = list_p sprintf("%s%.2f", n > 1 ? " " : "", p99[n])
	}
	END {
		printf "ratio mco/nginx req/s: %.2f (median of %d rounds: %s)\n", median(rps, n), n, list_r
		printf "ratio mco/nginx p99: %.2f (median of %d rounds: %s)\n", median(p99, n), n, list_p
		printf "errors: %d; peak RSS: mco %.1f MiB (anon %.1f), nginx %.1f MiB (anon %.1f)\n", errs, mt / 1024, ma / 1024, nt / 1024, na / 1024
	}'
echo "raw wrk output: $WORK/wrk-{mco,nginx}-<round>.txt"
