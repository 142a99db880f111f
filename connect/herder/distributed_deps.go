package herder

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/storage"
)

// DistributedWorker is the local runtime the distributed herder drives: it runs the
// connector and task instances assigned to this worker. connect/runtime's
// Worker provides it. Calls come from the herder's goroutine, one at a
// time; Stop* calls wait until the instance stopped (bounded by the
// worker's task.shutdown.graceful.timeout.ms).
type DistributedWorker interface {
	// StartConnector starts a connector instance in the given target
	// state (a STOPPED connector is only recorded as such, not started). It reports the instance's life through
	// l, and calls reconfigure (from any goroutine) when the connector
	// asks for its task configs to be regenerated.
	StartConnector(ctx context.Context, name string, config map[string]string, target storage.TargetState, l DistributedStatusListener, reconfigure func()) error
	StopConnector(ctx context.Context, name string)
	// ConnectorTaskConfigs asks the running connector for up to
	// tasks.max task configs.
	ConnectorTaskConfigs(ctx context.Context, name string, config map[string]string) ([]map[string]string, error)
	StartTask(ctx context.Context, id storage.TaskID, connConfig, taskConfig map[string]string, target storage.TargetState, l DistributedStatusListener) error
	StopTasks(ctx context.Context, ids []storage.TaskID)
	// SetTargetState moves a running connector and its local tasks to
	// RUNNING or PAUSED.
	SetTargetState(ctx context.Context, name string, target storage.TargetState) error
}

// DistributedStatusListener hears the life of the connectors and tasks a worker
// runs (Kafka's ConnectorStatus.Listener and TaskStatus.Listener). The
// herder implements it: it writes each event to the status topic with its
// worker id and group generation. Task < 0 means the connector itself.
type DistributedStatusListener interface {
	// Status reports a new state (RUNNING, PAUSED, STOPPED, FAILED with
	// err, UNASSIGNED on shutdown, DESTROYED on deletion, RESTARTING).
	Status(connector string, task int, state storage.State, err error)
}

// OffsetManager serves KIP-875 (GET/PATCH/DELETE /connectors/{name}/offsets)
// for a connector's config; the herder does the checks around it (the
// leader, a STOPPED connector). A nil offsets to Modify means reset.
type OffsetManager interface {
	ConnectorOffsets(ctx context.Context, name string, config map[string]string) (*ConnectorOffsets, error)
	ModifyConnectorOffsets(ctx context.Context, name string, config map[string]string, offsets *ConnectorOffsets) (message string, err error)
}

// DistributedConfig configures a distributed herder. Zero durations take
// Kafka Connect's defaults.
type DistributedConfig struct {
	// GroupID is group.id; WorkerID identifies this worker in statuses
	// (Kafka uses the advertised host:port); URL is the advertised REST
	// URL other workers forward requests to ("http://host:port/").
	GroupID  string
	WorkerID string
	URL      string
	// Protocol is connect.protocol: "sessioned" (default), "compatible"
	// or "eager".
	Protocol string

	SessionTimeout    time.Duration // session.timeout.ms, 10 s
	RebalanceTimeout  time.Duration // rebalance.timeout.ms, 60 s
	HeartbeatInterval time.Duration // heartbeat.interval.ms, 3 s
	// ScheduledRebalanceMaxDelay is scheduled.rebalance.max.delay.ms (5
	// min): how long a departed worker's work waits for it to return.
	ScheduledRebalanceMaxDelay time.Duration
	// SetScheduledRebalanceMaxDelay marks an explicit 0 (reassign at once).
	SetScheduledRebalanceMaxDelay bool
	WorkerSyncTimeout             time.Duration // worker.sync.timeout.ms, 3 s
	WorkerUnsyncBackoff           time.Duration // worker.unsync.backoff.ms, 5 min
	KeyRotationInterval           time.Duration // inter.worker.key.ttl.ms, 1 h
	// KIP-507 signing of internal requests, Kafka's names and defaults:
	// inter.worker.key.generation.algorithm (HmacSHA256),
	// inter.worker.key.size (bits; 0: the algorithm's default),
	// inter.worker.signature.algorithm (HmacSHA256) and
	// inter.worker.verification.algorithms ([HmacSHA256]).
	KeyGenerationAlgorithm string
	KeySize                int
	SignatureAlgorithm     string
	VerificationAlgorithms []string
	// RetryBackoff and RetryBackoffMax pace group retries (retry.backoff.ms,
	// retry.backoff.max.ms).
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration

	// KafkaClusterID is reported by GET /.
	KafkaClusterID string
	Logger         *slog.Logger
}

// DistributedDeps are the parts a distributed herder works with.
type DistributedDeps struct {
	// Client reaches the Kafka cluster for the group protocol.
	Client   *kgo.Client
	Configs  storage.ConfigStore
	Statuses storage.StatusStore
	// Topics is the KIP-558 active topics store (often Statuses); nil
	// answers empty topic lists.
	Topics  storage.TopicStatusStore
	Worker  DistributedWorker
	Offsets OffsetManager
	// Validate validates a connector config (every field's errors), as
	// PUT /connector-plugins/{plugin}/config/validate answers.
	Validate func(ctx context.Context, config map[string]string) (*ConfigInfos, error)
	// ConnectorType tells a config's connector kind (source or sink).
	ConnectorType func(config map[string]string) ConnectorType
	// HTTP sends task configs from a follower to the leader (POST
	// /connectors/{name}/tasks); nil uses a client with a 90 s timeout.
	HTTP *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (c *DistributedConfig) withDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.SessionTimeout, 10*time.Second)
	def(&c.RebalanceTimeout, 60*time.Second)
	def(&c.HeartbeatInterval, 3*time.Second)
	if !c.SetScheduledRebalanceMaxDelay {
		def(&c.ScheduledRebalanceMaxDelay, 5*time.Minute)
	}
	def(&c.WorkerSyncTimeout, 3*time.Second)
	def(&c.WorkerUnsyncBackoff, 5*time.Minute)
	def(&c.KeyRotationInterval, time.Hour)
	def(&c.RetryBackoff, 100*time.Millisecond)
	def(&c.RetryBackoffMax, time.Second)
	if c.Protocol == "" {
		c.Protocol = "sessioned"
	}
	c.signingDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}
