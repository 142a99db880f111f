#!/usr/bin/env bash
# bench.sh — `make bench`: Fjord's broker side by side with Apache Kafka 4.4
# (KRaft, jars fetched by scripts/kafka.sh, never committed) and franz-go's
# in-memory kfake, each in its own process and driven by the same franz-go
# producer and consumer processes. Prints a Markdown table of medians with
# Fjord/Kafka and Fjord/kfake ratios; the work is done by `fjord bench run`
# (internal/bench), whose flags pass through:
#
#   scripts/bench.sh                       full run (3 runs, ~10-15 min on 2 cores)
#   scripts/bench.sh --write               ... and refresh BENCHMARKS.md
#   scripts/bench.sh --quick               smoke run, seconds
#   scripts/bench.sh --brokers kafka,kfake --runs 1
#   bin/fjord bench run --help             every flag
#
# Ports (loopback only): Kafka 19692 (+19693 controller), kfake 19694,
# Fjord 19696 (+19697 http). Measure on a quiet machine: every broker
# should be alone while measured.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

"${GO:-go}" build -o bin/fjord ./cmd/fjord

# Fetch Kafka's jars up front (idempotent) so the download is not part of
# any measurement, unless Kafka is left out.
brokers="fjord,kafka,kfake"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[$i]}" in
	--brokers) brokers="${args[$((i + 1))]:-}" ;;
	--brokers=*) brokers="${args[$i]#--brokers=}" ;;
	esac
done
case ",$brokers," in
*,kafka,*) scripts/kafka.sh fetch ;;
esac

# The exact command, quoted as a shell would need it, for the report header.
cmdline="scripts/bench.sh"
for a in "$@"; do
	case "$a" in
	"" | *[!A-Za-z0-9_./:=,+-]*) a="'${a//\'/\'\\\'\'}'" ;;
	esac
	cmdline+=" $a"
done
export FJORD_BENCH_COMMAND="$cmdline"
exec bin/fjord bench run "$@"
