// Package cli is the logic behind Fjord's people-facing commands: `fjord
// topic`, `fjord produce`, `fjord consume` and `fjord group`. The cobra files
// in cmd/fjord only parse flags into the option structs defined here and call
// one function per subcommand, so everything a person sees — tables, JSON,
// progress lines and error messages — is produced and tested in this package.
//
// Usage, from a command's RunE:
//
//	err := cli.TopicCreate(ctx, conn, name, opts, cli.NewPrinter(cmd.OutOrStdout(), format))
//
// where conn is a [ClientOptions] filled from the shared flags
// (--bootstrap-server, --command-config, --timeout).
//
// Design:
//   - The commands speak the Kafka protocol through franz-go only (kgo for
//     produce/consume, kadm for admin), never through broker internals, so they
//     work unchanged against Fjord, Apache Kafka or Redpanda. Option names and
//     meanings follow kafka-topics.sh, kafka-console-producer.sh,
//     kafka-console-consumer.sh, kafka-consumer-groups.sh and kcat.
//   - Every command first pings the cluster with a bounded timeout, so an
//     unreachable broker is reported at once ("cannot reach ...: is `fjord dev`
//     running?") instead of after the client's retry budget.
//   - Kafka error codes keep their Kafka names in messages (kerr formats them
//     as "UNKNOWN_TOPIC_OR_PARTITION: ..."), with the broker's own message
//     when it adds something; the errors people commonly hit (missing topic,
//     active group, oversized record, ...) also say what to do next.
//   - Group consumers commit what they printed, never merely what they
//     fetched, and also save the position of partitions they printed
//     nothing from, as Kafka's console consumer does on close.
//   - Text output is aligned tables for people; --output json gives one JSON
//     document (or one object per record for consume) for scripts.
package cli
