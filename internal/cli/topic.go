package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicCreateOptions are the flags of `fjord topic create`.
type TopicCreateOptions struct {
	Partitions        int32    // -1: the broker's num.partitions
	ReplicationFactor int16    // -1: the broker's default.replication.factor
	Configs           []string // key=value topic configs
	IfNotExists       bool
	ValidateOnly      bool
}

// TopicCreate creates one topic.
func TopicCreate(ctx context.Context, co *ClientOptions, name string, o TopicCreateOptions, p *Printer) error {
	if err := validateTopicName(name); err != nil {
		return err
	}
	configs, err := parseConfigs(o.Configs)
	if err != nil {
		return err
	}
	if o.Partitions == 0 || o.Partitions < -1 {
		return fmt.Errorf("--partitions %d: want at least 1 (or leave it out for the broker's num.partitions)", o.Partitions)
	}
	if o.ReplicationFactor == 0 || o.ReplicationFactor < -1 {
		return fmt.Errorf("--replication-factor %d: want at least 1 (or leave it out for the broker's default.replication.factor)", o.ReplicationFactor)
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()

	create := c.Admin.CreateTopics
	if o.ValidateOnly {
		create = c.Admin.ValidateCreateTopics
	}
	resps, err := create(ctx, o.Partitions, o.ReplicationFactor, configs, name)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	r, ok := resps[name]
	if !ok {
		return fmt.Errorf("create topic %s: the broker's answer did not mention the topic", name)
	}
	exists := false
	if r.Err != nil {
		if !o.IfNotExists || !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			return topicErr(name, brokerErr(r.Err, r.ErrMessage))
		}
		exists = true
	}
	if p.JSONMode() {
		out := struct {
			Topic             string `json:"topic"`
			ID                string `json:"id,omitempty"`
			Partitions        int32  `json:"partitions,omitempty"`
			ReplicationFactor int16  `json:"replication_factor,omitempty"`
			Created           bool   `json:"created"`
			AlreadyExisted    bool   `json:"already_existed,omitempty"`
			ValidateOnly      bool   `json:"validate_only,omitempty"`
		}{name, topicID(r.ID), r.NumPartitions, r.ReplicationFactor, !exists && !o.ValidateOnly, exists, o.ValidateOnly}
		if exists {
			out.Partitions, out.ReplicationFactor = 0, 0
		}
		return p.JSON(out)
	}
	switch {
	case exists:
		p.Linef("Topic %s already exists; nothing changed.", name)
	case o.ValidateOnly:
		p.Linef("Topic %s is valid%s; nothing created (--validate-only).", name, shape(r.NumPartitions, r.ReplicationFactor))
	default:
		p.Linef("Created topic %s%s.", name, shape(r.NumPartitions, r.ReplicationFactor))
	}
	return nil
}

// shape describes a topic's size when the broker said it (CreateTopics v5+).
func shape(partitions int32, rf int16) string {
	if partitions <= 0 || rf <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%s, replication factor %d)", plural(int(partitions), "partition"), rf)
}

// validateTopicName applies Kafka's rules locally, so the message can say
// which rule a name breaks rather than INVALID_TOPIC_EXCEPTION alone.
func validateTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	case len(name) > 249:
		return fmt.Errorf("topic name is %d characters long; Kafka allows at most 249", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q contains %q: Kafka allows only ASCII letters, digits, '.', '_' and '-'", name, r)
		}
	}
	return nil
}

// parseConfigs turns repeated key=value flags into CreateTopics configs.
func parseConfigs(kvs []string) (map[string]*string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]*string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--config %q: want key=value, e.g. retention.ms=86400000", kv)
		}
		m[k] = &v
	}
	return m, nil
}

// topicID renders an ID as Kafka prints it (URL-safe base64, no padding).
func topicID(id kadm.TopicID) string {
	if id == (kadm.TopicID{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// replicationFactor is what kafka-topics reports: the replica count of the
// first partition.
func replicationFactor(d kadm.TopicDetail) int {
	for _, pd := range d.Partitions.Sorted() {
		return len(pd.Replicas)
	}
	return 0
}

// TopicList lists topic names with their partition count and replication
// factor; internal topics only with internal set.
func TopicList(ctx context.Context, co *ClientOptions, internal bool, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tds, err := c.Admin.ListTopicsWithInternal(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	type row struct {
		Topic             string `json:"topic"`
		Partitions        int    `json:"partitions"`
		ReplicationFactor int    `json:"replication_factor"`
		Internal          bool   `json:"internal"`
	}
	rows := []row{}
	for _, d := range tds.Sorted() {
		if d.IsInternal && !internal {
			continue
		}
		rows = append(rows, row{d.Topic, len(d.Partitions), replicationFactor(d), d.IsInternal})
	}
	if p.JSONMode() {
		return p.JSON(rows)
	}
	header := []string{"TOPIC", "PARTITIONS", "REPLICATION-FACTOR"}
	if internal {
		header = append(header, "INTERNAL")
	}
	var cells [][]string
	for _, r := range rows {
		c := []string{r.Topic, strconv.Itoa(r.Partitions), strconv.Itoa(r.ReplicationFactor)}
		if internal {
			c = append(c, strconv.FormatBool(r.Internal))
		}
		cells = append(cells, c)
	}
	return p.Table(header, cells)
}

type describedPartition struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas,omitempty"`
	Error           string  `json:"error,omitempty"`
}

type describedTopic struct {
	Topic             string               `json:"topic"`
	ID                string               `json:"id,omitempty"`
	Internal          bool                 `json:"internal"`
	PartitionCount    int                  `json:"partition_count"`
	ReplicationFactor int                  `json:"replication_factor"`
	Configs           map[string]*string   `json:"configs"`
	Partitions        []describedPartition `json:"partitions"`
}

// TopicDescribe shows, like `kafka-topics --describe`, each topic's
// partitions with leader, replicas and ISR, and the configs that are not at
// their default. With no names it describes every non-internal topic. A
// missing topic is reported after the others are printed.
func TopicDescribe(ctx context.Context, co *ClientOptions, names []string, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tds, err := c.Admin.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("describe topics: %w", err)
	}
	var errs []error
	var found []string
	if len(names) == 0 {
		found = tds.Names()
	}
	for _, n := range names {
		d, ok := tds[n]
		switch {
		case !ok:
			errs = append(errs, topicErr(n, kerr.UnknownTopicOrPartition))
		case d.Err != nil:
			errs = append(errs, topicErr(n, d.Err))
		case !slices.Contains(found, n):
			found = append(found, n)
		}
	}
	var configs kadm.ResourceConfigs
	if len(found) > 0 {
		configs, err = c.Admin.DescribeTopicConfigs(ctx, found...)
		if err != nil {
			// Configs are a detail; the partition layout is still worth
			// showing, so report the failure after it.
			errs = append(errs, fmt.Errorf("describe topic configs: %w", err))
		}
	}
	out := make([]describedTopic, 0, len(found))
	for _, n := range found {
		d := tds[n]
		dt := describedTopic{
			Topic: n, ID: topicID(d.ID), Internal: d.IsInternal,
			PartitionCount: len(d.Partitions), ReplicationFactor: replicationFactor(d),
			Configs: map[string]*string{},
		}
		for _, pd := range d.Partitions.Sorted() {
			dp := describedPartition{
				Partition: pd.Partition, Leader: pd.Leader, LeaderEpoch: pd.LeaderEpoch,
				Replicas: nonNil(pd.Replicas), ISR: nonNil(pd.ISR), OfflineReplicas: pd.OfflineReplicas,
			}
			if pd.Err != nil {
				dp.Error = pd.Err.Error()
			}
			dt.Partitions = append(dt.Partitions, dp)
		}
		if rc, err := configs.On(n, nil); err == nil {
			if rc.Err != nil {
				errs = append(errs, topicErr(n, fmt.Errorf("describe configs: %w", brokerErr(rc.Err, rc.ErrMessage))))
			}
			for _, cfg := range rc.Configs {
				if nonDefault(cfg) {
					dt.Configs[cfg.Key] = cfg.Value
				}
			}
		}
		out = append(out, dt)
	}
	if p.JSONMode() {
		if err := p.JSON(out); err != nil {
			return err
		}
	} else {
		for i, dt := range out {
			if i > 0 {
				p.Linef("")
			}
			if err := printDescribedTopic(p, dt); err != nil {
				return err
			}
		}
	}
	return errors.Join(errs...)
}

func nonNil(xs []int32) []int32 {
	if xs == nil {
		return []int32{}
	}
	return xs
}

// nonDefault matches kafka-topics: a config is shown unless its value comes
// from the built-in default. Brokers before DescribeConfigs v1 report no
// source; kadm maps their is_default flag onto DEFAULT_CONFIG.
func nonDefault(c kadm.Config) bool {
	return c.Source != kmsg.ConfigSourceDefaultConfig && c.Source != kmsg.ConfigSourceUnknown
}

func printDescribedTopic(p *Printer, dt describedTopic) error {
	var cfgs []string
	for k, v := range dt.Configs {
		val := "(sensitive)"
		if v != nil {
			val = *v
		}
		cfgs = append(cfgs, k+"="+val)
	}
	sort.Strings(cfgs)
	cfgText := strings.Join(cfgs, ",")
	if cfgText == "" {
		cfgText = "(all defaults)"
	}
	id := dt.ID
	if id == "" {
		id = "-"
	}
	p.Linef("Topic: %s  ID: %s  Partitions: %d  Replication factor: %d  Configs: %s",
		dt.Topic, id, dt.PartitionCount, dt.ReplicationFactor, cfgText)
	showOffline, showErr := false, false
	for _, dp := range dt.Partitions {
		showOffline = showOffline || len(dp.OfflineReplicas) > 0
		showErr = showErr || dp.Error != ""
	}
	header := []string{"PARTITION", "LEADER", "REPLICAS", "ISR"}
	if showOffline {
		header = append(header, "OFFLINE")
	}
	if showErr {
		header = append(header, "ERROR")
	}
	var rows [][]string
	for _, dp := range dt.Partitions {
		leader := strconv.Itoa(int(dp.Leader))
		if dp.Leader < 0 {
			leader = "none"
		}
		r := []string{strconv.Itoa(int(dp.Partition)), leader, joinInt32s(dp.Replicas), joinInt32s(dp.ISR)}
		if showOffline {
			r = append(r, joinInt32s(dp.OfflineReplicas))
		}
		if showErr {
			r = append(r, dp.Error)
		}
		rows = append(rows, r)
	}
	return p.Table(header, rows)
}

// TopicAlterOptions are the flags of `fjord topic alter`.
type TopicAlterOptions struct {
	Set          []string // key=value configs to set
	Delete       []string // config keys to return to their default
	Partitions   int32    // new total partition count; 0 leaves it
	ValidateOnly bool
}

// TopicAlter changes a topic's configs (IncrementalAlterConfigs) and grows
// its partition count (CreatePartitions).
func TopicAlter(ctx context.Context, co *ClientOptions, name string, o TopicAlterOptions, p *Printer) error {
	if len(o.Set) == 0 && len(o.Delete) == 0 && o.Partitions == 0 {
		return errors.New("nothing to alter: give --config key=value, --delete-config key or --partitions N")
	}
	if o.Partitions < 0 {
		return fmt.Errorf("--partitions %d: want the new total number of partitions", o.Partitions)
	}
	set, err := parseConfigs(o.Set)
	if err != nil {
		return err
	}
	var alters []kadm.AlterConfig
	var setKeys []string
	for k := range set {
		setKeys = append(setKeys, k)
	}
	sort.Strings(setKeys)
	for _, k := range setKeys {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: set[k]})
	}
	for _, k := range o.Delete {
		if _, dup := set[k]; dup {
			return fmt.Errorf("config %s is both set and deleted: pick one", k)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}

	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tds, err := c.Admin.ListTopics(ctx, name)
	if err != nil {
		return fmt.Errorf("alter topic %s: %w", name, err)
	}
	d, ok := tds[name]
	if !ok {
		return topicErr(name, kerr.UnknownTopicOrPartition)
	}
	if d.Err != nil {
		return topicErr(name, d.Err)
	}
	before := int32(len(d.Partitions))
	if o.Partitions > 0 && o.Partitions < before {
		return fmt.Errorf("topic %s has %d partitions: Kafka can add partitions but never remove them", name, before)
	}

	result := struct {
		Topic            string             `json:"topic"`
		Set              map[string]*string `json:"set,omitempty"`
		Deleted          []string           `json:"deleted,omitempty"`
		PartitionsBefore int32              `json:"partitions_before"`
		Partitions       int32              `json:"partitions"`
		ValidateOnly     bool               `json:"validate_only,omitempty"`
	}{Topic: name, Set: set, Deleted: o.Delete, PartitionsBefore: before, Partitions: before, ValidateOnly: o.ValidateOnly}

	if len(alters) > 0 {
		alter := c.Admin.AlterTopicConfigs
		if o.ValidateOnly {
			alter = c.Admin.ValidateAlterTopicConfigs
		}
		resps, err := alter(ctx, alters, name)
		if err != nil {
			return fmt.Errorf("alter configs of topic %s: %w", name, err)
		}
		for _, r := range resps {
			if r.Err != nil {
				return topicErr(name, fmt.Errorf("alter configs: %w", brokerErr(r.Err, r.ErrMessage)))
			}
		}
	}
	if o.Partitions > before {
		update := c.Admin.UpdatePartitions
		if o.ValidateOnly {
			update = c.Admin.ValidateUpdatePartitions
		}
		resps, err := update(ctx, int(o.Partitions), name)
		if err != nil {
			return fmt.Errorf("add partitions to topic %s: %w", name, err)
		}
		r, err := resps.On(name, nil)
		if err == nil {
			err = brokerErr(r.Err, r.ErrMessage)
		}
		if err != nil {
			return topicErr(name, fmt.Errorf("add partitions (configs were already changed): %w", err))
		}
		result.Partitions = o.Partitions
	}

	if p.JSONMode() {
		return p.JSON(result)
	}
	verb := func(done, dry string) string {
		if o.ValidateOnly {
			return dry
		}
		return done
	}
	for _, k := range setKeys {
		p.Linef("%s %s=%s on topic %s.", verb("Set", "Would set"), k, *set[k], name)
	}
	for _, k := range o.Delete {
		p.Linef("%s %s of topic %s to its default.", verb("Reset", "Would reset"), k, name)
	}
	switch {
	case o.Partitions > before:
		p.Linef("%s topic %s from %d to %d partitions.", verb("Grew", "Would grow"), name, before, o.Partitions)
	case o.Partitions != 0:
		p.Linef("Topic %s already has %d partitions.", name, before)
	}
	if o.ValidateOnly {
		p.Linef("Nothing changed (--validate-only).")
	}
	return nil
}

// TopicDelete deletes topics. With ifExists, missing topics are skipped.
// Internal topics are refused here, as kafka-topics does, because deleting
// __consumer_offsets loses every group's position.
func TopicDelete(ctx context.Context, co *ClientOptions, names []string, ifExists bool, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tds, err := c.Admin.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	type result struct {
		Topic   string `json:"topic"`
		Deleted bool   `json:"deleted"`
		Error   string `json:"error,omitempty"`
	}
	var results []result
	var errs []error
	var toDelete []string
	for _, n := range names {
		d, ok := tds[n]
		switch {
		case (!ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition)) && ifExists:
			results = append(results, result{Topic: n})
		case ok && d.IsInternal:
			err := fmt.Errorf("topic %s is internal to Kafka and is not deleted", n)
			errs = append(errs, err)
			results = append(results, result{Topic: n, Error: err.Error()})
		default:
			toDelete = append(toDelete, n)
		}
	}
	if len(toDelete) > 0 {
		resps, err := c.Admin.DeleteTopics(ctx, toDelete...)
		if err != nil {
			return fmt.Errorf("delete topics: %w", err)
		}
		for _, n := range toDelete {
			r, ok := resps[n]
			var rerr error
			switch {
			case !ok:
				rerr = errors.New("the broker's answer did not mention the topic")
			case errors.Is(r.Err, kerr.UnknownTopicOrPartition) && ifExists:
				results = append(results, result{Topic: n})
				continue
			default:
				rerr = brokerErr(r.Err, r.ErrMessage)
			}
			if rerr != nil {
				rerr = topicErr(n, rerr)
				errs = append(errs, rerr)
				results = append(results, result{Topic: n, Error: rerr.Error()})
				continue
			}
			results = append(results, result{Topic: n, Deleted: true})
		}
	}
	// Report in the order the names were given.
	order := make(map[string]int, len(names))
	for i, n := range names {
		if _, seen := order[n]; !seen {
			order[n] = i
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return order[results[i].Topic] < order[results[j].Topic] })
	if p.JSONMode() {
		if err := p.JSON(results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			switch {
			case r.Deleted:
				p.Linef("Deleted topic %s.", r.Topic)
			case r.Error == "":
				p.Linef("Topic %s does not exist; skipped (--if-exists).", r.Topic)
			}
		}
	}
	return errors.Join(errs...)
}

// plural renders "1 partition", "3 partitions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
