// Package bench measures Fjord's broker side by side with Apache Kafka 4.4
// and franz-go's in-memory kfake cluster, and renders the comparison that
// `make bench` prints and BENCHMARKS.md keeps.
//
// Usage: `fjord bench run` (or scripts/bench.sh, which builds bin/fjord and
// fetches Kafka's jars first) orchestrates everything; `--quick` does a small
// smoke run and `--write` refreshes BENCHMARKS.md. The pieces it drives are
// ordinary subcommands so that each runs in its own process:
//
//	fjord bench produce|consume|latency --brokers ADDR --topic T ...
//	fjord bench kfake --port P
//
// Design. Every figure comes from a separate process, so the broker under
// test never shares a Go runtime, heap or scheduler with the load generator:
// the orchestrator starts one broker process at a time (stopping the
// previous one first), times process start until it answers a Metadata
// request, creates an 8-partition topic per workload, and runs the driver
// subcommands as child processes that print one JSON Result line each. The
// drivers are the same franz-go client with franz-go's defaults for every
// broker; only acks varies (and acks=1 needs idempotence off, which franz-go
// requires), and the latency driver disables the 10 ms producer linger so
// that it measures the broker's acknowledgement, not the client's timer.
// Warm-up records are produced and consumed before the clock starts.
// Broker memory is read from /proc/PID/status (VmRSS now, VmHWM as the
// peak), which is why the orchestrator is Linux-only. Each figure is the
// median over --runs repetitions; ratios are Fjord/Kafka and Fjord/kfake,
// computed from those medians.
//
// The machine's limits (loopback TCP throughput between two goroutines and
// sequential disk write with an fdatasync, like dd conv=fdatasync, on the
// data directory's filesystem) are printed beside the table for context.
//
// The other subcommands compare the rest of Fjord the same way, each with
// its own BENCHMARKS.md block: `fjord bench connect` (the Connect runtime
// against plain franz-go), `fjord bench cluster` (3 brokers with RF 3
// against 1 broker, and failover time) and `fjord bench postgres` (the
// Postgres CDC source against pg_recvlogical and Debezium 3.6.1 on Kafka
// Connect 4.4, its snapshot against COPY TO STDOUT, and the Postgres sink
// against COPY FROM STDIN).
package bench
