// Package schemaregistry is Fjord's built-in schema registry: the
// Confluent Schema Registry REST API (subjects, versions, ids, config,
// compatibility, mode) over Confluent's _schemas topic, so Confluent's
// serializers, Kafka Connect's AvroConverter and Fjord's own talk to it
// unchanged, and a Confluent registry could read the same topic.
//
// Usage:
//
//	srv, err := schemaregistry.New(schemaregistry.Config{
//		Bootstrap:     []string{"127.0.0.1:9092"},
//		AdvertisedURL: "http://127.0.0.1:8081",
//	})
//	err = srv.Start(ctx)          // creates/reads _schemas, joins the election
//	srv.Mount(router, "/schemas") // or http.ListenAndServe(addr, srv.Handler())
//	defer srv.Close()
//
// Design. Every record (schema versions, configs, modes, subject
// deletes; Confluent's key/value JSON) lives in the compacted,
// one-partition _schemas topic. Each instance reads it from the start
// into an in-memory state (state.go) and serves reads from it. Writes
// are made by one instance at a time, the leader, elected through a
// Kafka consumer group (GroupElector: the current leader keeps the role
// while it stays in the group; otherwise the first eligible member);
// other instances forward write requests to the leader's advertised URL
// over HTTP. Before a rebalance the leader stops leading and waits for
// its write in progress (Registry.drain), so two leaders never write at
// once (short of a leader cut off from the group coordinator but not
// from the partition leader, the weakness Confluent's election shares). The leader runs writes one at a time on a writer goroutine:
// it appends a NOOP and reads it back (so it has seen every earlier
// write, even its predecessor's), decides the id and version from the
// state (a new id is max+1 over every id ever read; the same schema text
// reuses its id), appends the record with acks=all and answers once it
// has read it back. A restarted instance rebuilds the same state from
// the topic, so ids survive restarts, and all instances agree on them.
//
// Schemas are stored and served in the canonical text Avro's Java
// library prints (avsc), which is what dedupes registrations, as in
// Confluent. Avro only: JSON Schema and Protobuf are refused with
// Confluent's "Invalid schema type" (42201); schema references are not
// supported (42201), nor are contexts, metadata, rule sets or
// normalization. Response shapes follow Confluent Platform 7 (schemaType
// omitted for AVRO, register answers {"id": n}).
package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config configures a registry Server. Names follow Confluent's
// properties where there is one.
type Config struct {
	// Bootstrap lists Kafka brokers (kafkastore.bootstrap.servers).
	// Empty: an in-memory journal (nothing survives a restart), unless
	// Journal is set.
	Bootstrap []string
	// Topic is the store topic (kafkastore.topic), default _schemas.
	Topic string
	// ReplicationFactor for creating Topic
	// (kafkastore.topic.replication.factor); 0 or -1: the broker default.
	ReplicationFactor int16
	// GroupID names the leader election group (schema.registry.group.id),
	// default schema-registry.
	GroupID string
	// AdvertisedURL is where other instances reach this one to forward
	// writes, including any mount prefix (http://host:8081).
	AdvertisedURL string
	// LeaderIneligible keeps this instance from becoming the writer
	// (leader.eligibility=false).
	LeaderIneligible bool
	// Compatibility is the default level (schema.compatibility.level),
	// BACKWARD when empty.
	Compatibility string
	// KafkaOpts are extra franz-go options (SASL, TLS, ...).
	KafkaOpts []kgo.Opt
	// Journal and Elector replace the Kafka-backed ones (tests, several
	// instances over one MemJournal). A given Journal is not closed by
	// Close.
	Journal Journal
	Elector Elector
	// WriteTimeout bounds a write (kafkastore.timeout.ms), default 30s.
	WriteTimeout time.Duration
	// LeaderWait is how long a write waits for a leader to be elected
	// before answering 50004, default 10s.
	LeaderWait time.Duration
	Logger     *slog.Logger
}

// Server is a schema registry instance: the Registry plus its HTTP API.
type Server struct {
	cfg     Config
	reg     *Registry
	journal Journal
	elector Elector
	router  chi.Router
	prefix  string
	httpc   *http.Client
	owned   []func()
}

// New returns a server; Start connects it.
func New(cfg Config) (*Server, error) {
	if cfg.Topic == "" {
		cfg.Topic = "_schemas"
	}
	if cfg.GroupID == "" {
		cfg.GroupID = "schema-registry"
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = -1
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.LeaderWait <= 0 {
		cfg.LeaderWait = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, httpc: &http.Client{Timeout: cfg.WriteTimeout + 5*time.Second}}
	s.journal, s.elector = cfg.Journal, cfg.Elector
	if s.journal == nil {
		if len(cfg.Bootstrap) == 0 {
			s.journal = NewMemJournal()
		} else {
			kj := NewKafkaJournal(cfg.Topic, cfg.ReplicationFactor, cfg.Logger, append([]kgo.Opt{kgo.SeedBrokers(cfg.Bootstrap...)}, cfg.KafkaOpts...)...)
			s.journal = kj
			s.owned = append(s.owned, func() { kj.Close() })
		}
	}
	if s.elector == nil {
		if len(cfg.Bootstrap) == 0 {
			s.elector = SelfElector{}
		} else {
			s.elector = NewGroupElector(cfg.GroupID, cfg.Topic, strings.TrimSuffix(cfg.AdvertisedURL, "/"), !cfg.LeaderIneligible, cfg.Logger,
				append([]kgo.Opt{kgo.SeedBrokers(cfg.Bootstrap...)}, cfg.KafkaOpts...)...)
		}
	}
	reg, err := NewRegistry(s.journal, s.elector, cfg.Compatibility, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s.reg = reg
	s.router = chi.NewRouter()
	s.routes(s.router)
	return s, nil
}

// Registry returns the registry behind the HTTP API (for in-process use).
func (s *Server) Registry() *Registry { return s.reg }

// Start reads the store to its end, then joins the leader election.
func (s *Server) Start(ctx context.Context) error {
	if err := s.reg.Start(ctx); err != nil {
		s.closeOwned()
		return err
	}
	if ge, ok := s.elector.(*GroupElector); ok {
		ge.onRevoke = s.reg.drain
		if err := ge.Start(ctx); err != nil {
			s.reg.Close()
			s.closeOwned()
			return err
		}
		s.owned = append([]func(){ge.Close}, s.owned...)
	}
	s.cfg.Logger.Info("schema registry started", "topic", s.cfg.Topic, "max.id", s.reg.MaxID())
	return nil
}

// WaitLeader waits until a writer is elected (useful before the first
// write in tests and at start-up banners).
func (s *Server) WaitLeader(ctx context.Context) (Leader, error) {
	for {
		if l := s.elector.Leader(); l.Known {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return Leader{}, errors.New("no schema registry leader elected")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Check reports whether the registry can take writes (a leader is
// known), for health checks (api.Server.AddCheck).
func (s *Server) Check() error {
	if l := s.elector.Leader(); !l.Known {
		return errors.New("schema registry: no leader elected (is Kafka reachable?)")
	}
	return nil
}

// Handler serves the API at the root.
func (s *Server) Handler() http.Handler { return s.router }

// Mount serves the API under prefix on r ("" or "/" for the root).
func (s *Server) Mount(r chi.Router, prefix string) {
	prefix = "/" + strings.Trim(prefix, "/")
	if prefix == "/" {
		prefix = ""
	}
	s.prefix = prefix
	if prefix == "" {
		r.Mount("/", s.router)
		return
	}
	r.Mount(prefix, s.router)
}

// Close leaves the election and stops reading.
func (s *Server) Close() error {
	s.reg.Close()
	s.closeOwned()
	return nil
}

func (s *Server) closeOwned() {
	for _, f := range s.owned {
		f()
	}
	s.owned = nil
}

// String describes the server for logs.
func (s *Server) String() string {
	return fmt.Sprintf("schema registry (topic %s, group %s)", s.cfg.Topic, s.cfg.GroupID)
}
