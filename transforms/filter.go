package transforms

import "github.com/fjordhq/fjord/connect"

// Filter is Kafka's org.apache.kafka.connect.transforms.Filter: drops
// every record. It is meant to run under a predicate
// ("transforms.f.predicate"), dropping the records that match (or, with
// negate, those that do not).
type Filter struct{}

func (Filter) Config() *connect.ConfigDef                     { return connect.NewConfigDef() }
func (Filter) Configure(map[string]string) error              { return nil }
func (Filter) Apply(*connect.Record) (*connect.Record, error) { return nil, nil }
func (Filter) Close() error                                   { return nil }
