// Package deploy holds Fjord's deployment artefacts and the tests that
// check them without a container engine:
//
//   - compose/compose.yaml: three broker+controller nodes, two Connect
//     workers, PostgreSQL and MinIO on one machine;
//   - kubernetes/: plain manifests and a kustomization (a StatefulSet of
//     brokers, a Deployment of Connect workers, Services, budgets, config);
//   - config/: server.properties, connect-distributed.properties,
//     mm2.properties and the connector configs of the three everyday jobs
//     (Postgres -> Kafka, Kafka -> S3, Kafka -> Postgres);
//   - examples/: runnable walk-throughs against `fjord dev`.
//
// The Dockerfile they run is at the repository root. The package has no
// code: its tests parse every file and check it against Fjord itself —
// each config key against the broker's key table, the worker's and the
// connectors' ConfigDefs and MirrorMaker 2's derivations; ports, probe
// paths and subcommands against what the code serves and the binary
// accepts — so an artefact cannot drift from the code unnoticed.
// docs/operations.md says how to run them.
package deploy
