package transforms

import (
	"slices"

	"github.com/fjordhq/fjord/connect"
)

// DropHeaders is Kafka's org.apache.kafka.connect.transforms.DropHeaders:
// removes every header whose key is listed in "headers".
type DropHeaders struct {
	headers []string
}

func dropHeadersConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: "headers", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonDuplicateList(false),
		Importance: connect.High, Doc: "The name of the headers to be removed.",
	})
}

func (t *DropHeaders) Config() *connect.ConfigDef { return dropHeadersConfigDef() }
func (t *DropHeaders) Close() error               { return nil }

func (t *DropHeaders) Configure(props map[string]string) error {
	cfg, err := parseConfig(dropHeadersConfigDef(), props)
	if err != nil {
		return err
	}
	t.headers = cfg.List("headers")
	return nil
}

func (t *DropHeaders) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	c := r.Clone()
	c.Headers = c.Headers[:0]
	for _, h := range r.Headers {
		if !slices.Contains(t.headers, h.Key) {
			c.Headers = append(c.Headers, h)
		}
	}
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	return c, nil
}
