#!/usr/bin/env bash
# Boot storm: 1,000 TLS connections at once against mco server and nginx (same bytes, same
# certificate), i.e. bench/mcs/run.sh -c 1000. Extra arguments go to run.sh (-d, --pprof).
# Run it under flock /tmp/mco-bench.lock.
exec "$(dirname "$0")/run.sh" -c 1000 "$@"
