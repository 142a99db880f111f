package main

import (
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fjordhq/fjord/connectors/postgres/cdc"
	"github.com/fjordhq/fjord/mirror/checkpoint"
	"github.com/fjordhq/fjord/mirror/source"
)

// registerPluginMetrics puts the process-wide collectors of plugins that
// keep their own metrics (MirrorMaker 2's record-count, byte-rate,
// record-age-ms, replication-latency-ms and checkpoint-latency-ms; the
// Postgres CDC connector's slot lag and milliseconds behind source) on
// reg. Registering them on a registry twice is harmless.
func registerPluginMetrics(reg prometheus.Registerer, log *slog.Logger) {
	if err := cdc.RegisterMetrics(reg); err != nil {
		log.Warn("postgres CDC metrics not registered", "err", err)
	}
	if err := source.RegisterMetrics(reg); err != nil {
		log.Warn("mirror source metrics not registered", "err", err)
	}
	if err := reg.Register(checkpoint.DefaultMetrics); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			log.Warn("mirror checkpoint metrics not registered", "err", err)
		}
	}
}
