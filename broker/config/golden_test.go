package config

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/kafkaref"
)

// The golden tests rebuild, for each scenario of internal/kafkaref's
// capture, the configuration the Kafka 4.4 broker ran with, and require
// our DescribeConfigs / CreateTopics / validation answers to equal
// Kafka's field by field, except for the differences in intentionalDiffs.

// intentionalDiffs are the places where we deliberately answer
// differently from Kafka, each with the reason.
var intentionalDiffs = map[string]string{
	"documentation": "Documentation text is Fjord's own short description of what the key does in Fjord; only its presence is compared.",
	"set order":     "Kafka prints key sets in error messages in Java HashSet order; ours are sorted. Compared as sets.",
}

// kafkaSHProps are the server.properties scripts/kafka.sh writes for port 19492.
func kafkaSHProps(logDir string) map[string]string {
	return map[string]string{
		"process.roles":                            "broker,controller",
		"node.id":                                  "1",
		"controller.quorum.voters":                 "1@127.0.0.1:19493",
		"listeners":                                "PLAINTEXT://127.0.0.1:19492,CONTROLLER://127.0.0.1:19493",
		"advertised.listeners":                     "PLAINTEXT://127.0.0.1:19492",
		"controller.listener.names":                "CONTROLLER",
		"listener.security.protocol.map":           "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                                 logDir,
		"offsets.topic.replication.factor":         "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"group.initial.rebalance.delay.ms":         "0",
	}
}

// bootstrapDynamic is what a freshly formatted Kafka 4.4 cluster already
// has: a cluster-default min.insync.replicas record (written at format time
// because eligible leader replicas are enabled).
func bootstrapDynamic() Dynamic {
	return Dynamic{ClusterDefault: map[string]string{"min.insync.replicas": "1"}}
}

type scenarioSetup struct {
	static  map[string]string
	dynamic Dynamic
}

func scenario(t *testing.T, name string) *Broker {
	t.Helper()
	var s scenarioSetup
	switch name {
	case "defaults":
		s = scenarioSetup{kafkaSHProps(goldenLogDir(t, "describe_configs_broker")), bootstrapDynamic()}
	case "precedence":
		props := kafkaSHProps(goldenLogDir(t, "describe_configs_broker_precedence"))
		for _, kv := range []string{
			"log.retention.hours=72", "log.retention.minutes=600", "log.roll.hours=48",
			"log.segment.bytes=536870912", "message.max.bytes=2000000", "log.cleaner.threads=2",
			"num.partitions=3", "compression.type=lz4", "auto.create.topics.enable=false",
		} {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = v
		}
		d := bootstrapDynamic()
		maps.Copy(d.ClusterDefault, map[string]string{"log.retention.ms": "3600000", "log.segment.bytes": "268435456", "log.cleaner.min.cleanable.ratio": "0.4"})
		d.Broker = map[string]string{"log.retention.ms": "7200000", "message.max.bytes": "3000000"}
		s = scenarioSetup{props, d}
	default:
		t.Fatalf("unknown scenario %s", name)
	}
	b, err := NewBroker(s.static, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("kafka.sh's server.properties rejected: %v", err)
	}
	return b.WithDynamic(s.dynamic)
}

// goldenLogDir reads the temporary log.dirs Kafka ran with from a capture.
func goldenLogDir(t *testing.T, golden string) string {
	t.Helper()
	resp := loadDescribe(t, golden)
	for _, e := range resp.Resources[0].Configs {
		if e.Name == "log.dirs" && e.Value != nil {
			return *e.Value
		}
	}
	t.Fatalf("%s: no log.dirs", golden)
	return ""
}

func loadCapture(t *testing.T, name string, req, resp any) *kafkaref.Capture {
	t.Helper()
	c, err := kafkaref.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DecodeRequest(req); err != nil {
		t.Fatal(err)
	}
	if err := c.DecodeResponse(resp); err != nil {
		t.Fatal(err)
	}
	return c
}

func loadDescribe(t *testing.T, name string) *kmsg.DescribeConfigsResponse {
	t.Helper()
	var req kmsg.DescribeConfigsRequest
	var resp kmsg.DescribeConfigsResponse
	loadCapture(t, name, &req, &resp)
	return &resp
}

// createdOverrides returns the configs a captured CreateTopics request gave topic.
func createdOverrides(t *testing.T, capture, topic string) map[string]string {
	t.Helper()
	var req kmsg.CreateTopicsRequest
	var resp kmsg.CreateTopicsResponse
	loadCapture(t, capture, &req, &resp)
	for _, tp := range req.Topics {
		if tp.Topic == topic {
			m := map[string]string{}
			for _, c := range tp.Configs {
				m[c.Name] = *c.Value
			}
			return m
		}
	}
	t.Fatalf("%s does not create %s", capture, topic)
	return nil
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return fmt.Sprintf("%q", *p)
}

func synString(ss []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.Name+"="+str(s.Value)+"/"+s.Source.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// diffEntries compares two DescribeConfigs answers, order included.
func diffEntries(got, want []kmsg.DescribeConfigsResponseResourceConfig) []string {
	var diffs []string
	gotNames, wantNames := names(got), names(want)
	if !slices.Equal(gotNames, wantNames) {
		diffs = append(diffs, fmt.Sprintf("entries differ:\n got %v\nwant %v", gotNames, wantNames))
		if !sameSet(gotNames, wantNames) {
			return diffs
		}
	}
	byName := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, g := range got {
		byName[g.Name] = g
	}
	for _, w := range want {
		g := byName[w.Name]
		check := func(field, gv, wv string) {
			if gv != wv {
				diffs = append(diffs, fmt.Sprintf("%s %s: got %s, want %s", w.Name, field, gv, wv))
			}
		}
		check("value", str(g.Value), str(w.Value))
		check("source", g.Source.String(), w.Source.String())
		check("read_only", fmt.Sprint(g.ReadOnly), fmt.Sprint(w.ReadOnly))
		check("is_default", fmt.Sprint(g.IsDefault), fmt.Sprint(w.IsDefault))
		check("is_sensitive", fmt.Sprint(g.IsSensitive), fmt.Sprint(w.IsSensitive))
		check("config_type", g.ConfigType.String(), w.ConfigType.String())
		check("synonyms", synString(g.ConfigSynonyms), synString(w.ConfigSynonyms))
		check("has documentation", fmt.Sprint(g.Documentation != nil), fmt.Sprint(w.Documentation != nil))
		if _, allowed := intentionalDiffs["documentation"]; !allowed {
			check("documentation", str(g.Documentation), str(w.Documentation))
		}
	}
	return diffs
}

func names(es []kmsg.DescribeConfigsResponseResourceConfig) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

func reportDiffs(t *testing.T, diffs []string) {
	t.Helper()
	for _, d := range diffs {
		t.Error(d)
	}
}

func TestDescribeTopicGolden(t *testing.T) {
	for _, tc := range []struct {
		golden, scenario, topic string
		overrides               func(t *testing.T) map[string]string
	}{
		{"describe_configs_topic_default", "defaults", "golden-default", nil},
		{"describe_configs_topic_overrides", "defaults", "golden-overrides", nil},
		{"describe_configs_topic_overrides_nosyn", "defaults", "golden-overrides", nil},
		{"describe_configs_topic_overrides_v1", "defaults", "golden-overrides", nil},
		{"describe_configs_topic_overrides_v3", "defaults", "golden-overrides", nil},
		{"describe_configs_topic_names", "defaults", "golden-overrides", nil},
		{"describe_configs_topic_precedence", "precedence", "golden-precedence", nil},
		{"describe_configs_topic_plain", "precedence", "golden-plain", nil},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			b := scenario(t, tc.scenario)
			capture := "create_topics_ok"
			if tc.scenario == "precedence" {
				capture = "create_topics_precedence"
			}
			overrides := createdOverrides(t, capture, tc.topic)
			var req kmsg.DescribeConfigsRequest
			var resp kmsg.DescribeConfigsResponse
			c := loadCapture(t, tc.golden, &req, &resp)
			req.Version = c.Version
			got := b.DescribeTopic(overrides, DescribeOptionsFor(&req, &req.Resources[0]))
			reportDiffs(t, diffEntries(got, resp.Resources[0].Configs))
		})
	}
}

func TestDescribeBrokerGolden(t *testing.T) {
	for _, tc := range []struct{ golden, scenario string }{
		{"describe_configs_broker", "defaults"},
		{"describe_configs_broker_v1", "defaults"},
		{"describe_configs_broker_cluster_default", "defaults"},
		{"describe_configs_broker_precedence", "precedence"},
		{"describe_configs_broker_cluster_default_set", "precedence"},
		{"describe_configs_broker_other", "defaults"},
		{"describe_configs_broker_bad_name", "defaults"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			b := scenario(t, tc.scenario)
			var req kmsg.DescribeConfigsRequest
			var resp kmsg.DescribeConfigsResponse
			c := loadCapture(t, tc.golden, &req, &resp)
			req.Version = c.Version
			res := resp.Resources[0]
			got, err := b.DescribeBroker(req.Resources[0].ResourceName, DescribeOptionsFor(&req, &req.Resources[0]))
			if res.ErrorCode != 0 {
				e, ok := err.(*Error)
				if !ok || e.Code != res.ErrorCode || e.Message != str2(res.ErrorMessage) {
					t.Fatalf("got %v, want error %d %q", err, res.ErrorCode, str2(res.ErrorMessage))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reportDiffs(t, diffEntries(got, res.Configs))
		})
	}
}

func str2(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestCreateTopicConfigsGolden(t *testing.T) {
	for _, tc := range []struct{ golden, scenario string }{
		{"create_topics_ok", "defaults"},
		{"create_topics_precedence", "precedence"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			b := scenario(t, tc.scenario)
			var req kmsg.CreateTopicsRequest
			var resp kmsg.CreateTopicsResponse
			loadCapture(t, tc.golden, &req, &resp)
			for i, rt := range resp.Topics {
				overrides := createdOverrides(t, tc.golden, req.Topics[i].Topic)
				got := b.CreateTopicConfigs(overrides)
				if len(got) != len(rt.Configs) {
					t.Errorf("%s: %d configs, want %d", rt.Topic, len(got), len(rt.Configs))
					continue
				}
				for j, w := range rt.Configs {
					g := got[j]
					if g.Name != w.Name || str(g.Value) != str(w.Value) || g.Source != w.Source || g.ReadOnly != w.ReadOnly || g.IsSensitive != w.IsSensitive {
						t.Errorf("%s: got %s=%s src %d ro %v sens %v, want %s=%s src %d ro %v sens %v", rt.Topic,
							g.Name, str(g.Value), g.Source, g.ReadOnly, g.IsSensitive, w.Name, str(w.Value), w.Source, w.ReadOnly, w.IsSensitive)
					}
				}
			}
		})
	}
}

// normalizeSets sorts the items of "[a, b]" lists in Kafka messages (see
// intentionalDiffs["set order"]).
func normalizeSets(msg string) string {
	if _, allowed := intentionalDiffs["set order"]; !allowed {
		return msg
	}
	i, j := strings.LastIndexByte(msg, '['), strings.LastIndexByte(msg, ']')
	if i < 0 || j < i || !strings.HasSuffix(msg, "]") {
		return msg
	}
	items := strings.Split(msg[i+1:j], ", ")
	sort.Strings(items)
	return msg[:i+1] + strings.Join(items, ", ") + "]"
}

// firstProblem is Kafka's share of our message: Kafka reports one
// problem, we report all, Kafka's first (see ValidateTopicConfigs).
func firstProblem(err error) string {
	e, ok := err.(*Error)
	if !ok || len(e.Problems) == 0 {
		return fmt.Sprint(err)
	}
	return e.Problems[0]
}

func TestCreateTopicsValidationGolden(t *testing.T) {
	b := scenario(t, "defaults")
	for _, golden := range []string{"create_topics_errors", "create_topics_validate_only", "create_topics_v4"} {
		var req kmsg.CreateTopicsRequest
		var resp kmsg.CreateTopicsResponse
		loadCapture(t, golden, &req, &resp)
		checked := 0
		for i, rt := range resp.Topics {
			configs := map[string]string{}
			for _, c := range req.Topics[i].Configs {
				configs[c.Name] = *c.Value
			}
			err := b.ValidateTopicConfigs(configs)
			switch {
			case rt.ErrorCode == 40: // INVALID_CONFIG: ours to find
				checked++
				e, ok := err.(*Error)
				if !ok || e.Code != 40 || firstProblem(err) != str2(rt.ErrorMessage) || !strings.HasPrefix(e.Message, str2(rt.ErrorMessage)) {
					t.Errorf("%s %s: got %v, want INVALID_CONFIG %q", golden, rt.Topic, err, str2(rt.ErrorMessage))
				}
			case err != nil:
				t.Errorf("%s %s: Kafka accepted the configs (answered %d), we say %v", golden, rt.Topic, rt.ErrorCode, err)
			}
		}
		if golden == "create_topics_errors" && checked < 9 {
			t.Errorf("%s: only %d config errors compared", golden, checked)
		}
	}
}

func TestAlterConfigsValidationGolden(t *testing.T) {
	b := scenario(t, "defaults")
	current := map[string]map[string]string{
		"golden-default":   {},
		"golden-overrides": createdOverrides(t, "create_topics_ok", "golden-overrides"),
		"golden.collide":   {},
	}
	check := func(golden string, typ kmsg.ConfigResourceType, name string, code int16, msg *string, err error) {
		t.Helper()
		want := normalizeSets(str2(msg))
		switch {
		case code == 0 && err != nil:
			t.Errorf("%s %s %q: Kafka accepted it, we say %v", golden, typ, name, err)
		case code != 0 && err == nil:
			t.Errorf("%s %s %q: Kafka says %d %q, we accept it", golden, typ, name, code, want)
		case code != 0:
			e, _ := err.(*Error)
			if e == nil || e.Code != code || normalizeSets(firstProblem(err)) != want {
				t.Errorf("%s %s %q: got %v, want %d %q", golden, typ, name, err, code, want)
			}
		}
	}
	for _, golden := range []string{"incremental_alter_configs_errors", "incremental_alter_configs_broker_bad_value",
		"incremental_alter_configs_broker_unknown", "incremental_alter_configs_broker_per_broker_only",
		"incremental_alter_configs_valid", "incremental_alter_configs_ops", "incremental_alter_configs_dynamic"} {
		var req kmsg.IncrementalAlterConfigsRequest
		var resp kmsg.IncrementalAlterConfigsResponse
		loadCapture(t, golden, &req, &resp)
		for i, r := range resp.Resources {
			rr := req.Resources[i]
			if r.ErrorCode == 3 { // UNKNOWN_TOPIC_OR_PARTITION: the broker's to answer
				continue
			}
			var err error
			if rr.ResourceType == kmsg.ConfigResourceTypeTopic {
				var next map[string]string
				if next, err = ApplyIncrementalAlter(rr.ResourceType, current[rr.ResourceName], rr.Configs); err == nil {
					err = b.ValidateTopicConfigs(next)
				}
			} else {
				var next map[string]string
				if next, err = ApplyIncrementalAlter(rr.ResourceType, nil, rr.Configs); err == nil {
					err = ValidateBrokerConfigs(rr.ResourceName, next)
				}
			}
			check(golden, rr.ResourceType, rr.ResourceName, r.ErrorCode, r.ErrorMessage, err)
		}
	}
	var req kmsg.AlterConfigsRequest
	var resp kmsg.AlterConfigsResponse
	loadCapture(t, "alter_configs_errors", &req, &resp)
	for i, r := range resp.Resources {
		rr := req.Resources[i]
		set := map[string]string{}
		for _, c := range rr.Configs {
			set[c.Name] = *c.Value
		}
		var err error
		if rr.ResourceType == kmsg.ConfigResourceTypeTopic {
			err = b.ValidateTopicConfigs(set)
		} else {
			err = ValidateBrokerConfigs(rr.ResourceName, set)
		}
		check("alter_configs_errors", rr.ResourceType, rr.ResourceName, r.ErrorCode, r.ErrorMessage, err)
	}
}
