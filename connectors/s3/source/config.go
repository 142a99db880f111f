package source

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// The source's own keys. Confluent's S3 source names where it has one
// (mode, s3.poll.interval.ms, record.batch.max.size, format.class, and
// the sink's keys.format.class / headers.format.class); the topic filter
// and restore.partitions are Fjord's. The s3.* transport keys, the
// formats' and the partitioners' keys (topics.dir, directory.delim,
// partitioner.class, path.format, ...) are defined by their packages, so a
// sink config pasted here reads the objects that sink wrote.
const (
	ModeConfig               = "mode"
	PollIntervalConfig       = "s3.poll.interval.ms"
	BatchMaxSizeConfig       = "record.batch.max.size"
	FormatClassConfig        = "format.class"
	KeysFormatClassConfig    = "keys.format.class"
	HeadersFormatClassConfig = "headers.format.class"
	RestorePartitionsConfig  = "restore.partitions"
	TopicsConfig             = "topics"
	TopicsRegexConfig        = "topics.regex"
	MinAgeConfig             = "object.min.age.ms"

	// ModeRestoreBackup reads what the S3 sink wrote (Confluent's
	// RESTORE_BACKUP); GENERIC (arbitrary objects routed by
	// topic.regex.list) is not implemented.
	ModeRestoreBackup = "RESTORE_BACKUP"
	modeGeneric       = "GENERIC"

	DefaultPollInterval = 60 * time.Second // Confluent's one minute
	DefaultMinAge       = 10 * time.Second
	DefaultBatchMaxSize = 200 // Confluent's default
	defaultSideFormat   = "io.confluent.connect.s3.format.avro.AvroFormat"

	// taskPartitionsConfig carries a task's (topic, partition) pairs, as
	// JSON, in its task config. It is not a user key.
	taskPartitionsConfig = "s3.source.task.partitions"
)

// ConfigDef returns every key the connector and its tasks read.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	storage.Define(d)
	def := func(order int, k connect.ConfigKey) {
		k.Group, k.OrderInGroup = "Connector", order
		d.Define(k)
	}
	formatClass := func(_ string, v any) error {
		s, _ := v.(string)
		_, err := format.New(s, nil)
		return err
	}
	def(1, connect.ConfigKey{Name: ModeConfig, Type: connect.TypeString, Default: ModeRestoreBackup,
		Validator: func(_ string, v any) error {
			s, _ := v.(string)
			switch {
			case strings.EqualFold(s, ModeRestoreBackup):
				return nil
			case strings.EqualFold(s, modeGeneric):
				return fmt.Errorf("Fjord's S3 source reads only what the S3 sink wrote: mode %s is not implemented, use %s", modeGeneric, ModeRestoreBackup)
			}
			return fmt.Errorf("String must be one of: %s", ModeRestoreBackup)
		},
		Recommended: func(map[string]any) []any { return []any{ModeRestoreBackup} },
		Importance:  connect.High, Width: connect.WidthShort, DisplayName: "Mode",
		Doc: "RESTORE_BACKUP reads the objects Confluent's (or Fjord's) S3 sink wrote under topics.dir, with the same format.class " +
			"and partitioner.class, back into their topics."})
	def(2, connect.ConfigKey{Name: FormatClassConfig, Type: connect.TypeClass, Default: connect.NoDefault, Validator: formatClass,
		Importance: connect.High, Width: connect.WidthLong, DisplayName: "Format class",
		Doc: "The format.class the sink wrote the objects with (JsonFormat, AvroFormat, ParquetFormat, ByteArrayFormat); " +
			"objects with another extension are ignored."})
	def(3, connect.ConfigKey{Name: PollIntervalConfig, Type: connect.TypeLong, Default: DefaultPollInterval.Milliseconds(),
		Validator: connect.AtLeast(1), Importance: connect.Medium, Width: connect.WidthMedium,
		DisplayName: "Metadata Change Monitoring Interval (ms)",
		Doc: "Frequency in milliseconds to list the bucket for new topics and partitions (the tasks are reconfigured when the set " +
			"changes) and, in each task that has read everything, for new objects."})
	def(4, connect.ConfigKey{Name: BatchMaxSizeConfig, Type: connect.TypeInt, Default: int32(DefaultBatchMaxSize),
		Validator: connect.AtLeast(1), Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Record batch max size",
		Doc: "The maximum amount of records to return each time storage is polled."})
	def(5, connect.ConfigKey{Name: RestorePartitionsConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Restore partitions",
		Doc: "true: each record goes to the Kafka partition its object's name carries, as Confluent's RESTORE_BACKUP does (create the " +
			"topics with at least as many partitions first). false: the partition is left to the producer's partitioner (by key)."})
	def(6, connect.ConfigKey{Name: TopicsConfig, Type: connect.TypeList, Default: []string{},
		Importance: connect.Medium, Width: connect.WidthLong, DisplayName: "Topics",
		Doc: "Restore only these topics (their names in the bucket). Empty, with topics.regex empty too, restores every topic found. " +
			"To write into another topic name, add a RegexRouter transform."})
	def(7, connect.ConfigKey{Name: TopicsRegexConfig, Type: connect.TypeString, Default: "",
		Validator: func(_ string, v any) error {
			s, _ := v.(string)
			_, err := compileWhole(s)
			return err
		},
		Importance: connect.Medium, Width: connect.WidthLong, DisplayName: "Topics regex",
		Doc: "Restore also the topics whose whole name matches this regular expression (a topic listed in topics or matching is restored)."})
	def(8, connect.ConfigKey{Name: KeysFormatClassConfig, Type: connect.TypeClass, Default: defaultSideFormat, Validator: formatClass,
		Importance: connect.Low, Width: connect.WidthLong, DisplayName: "Keys format class",
		Doc: "The format of the .keys side files (the sink's keys.format.class); where one sits beside an object, its records' keys are restored."})
	def(9, connect.ConfigKey{Name: HeadersFormatClassConfig, Type: connect.TypeClass, Default: defaultSideFormat, Validator: formatClass,
		Importance: connect.Low, Width: connect.WidthLong, DisplayName: "Headers format class",
		Doc: "The format of the .headers side files (the sink's headers.format.class); where one sits beside an object, its records' headers are restored."})
	def(10, connect.ConfigKey{Name: MinAgeConfig, Type: connect.TypeLong, Default: DefaultMinAge.Milliseconds(),
		Validator: connect.AtLeast(0), Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Object minimum age (ms)",
		Doc: "An object is read once it is this old (by the store's last-modified time, or since a listing first saw it when the " +
			"store's clock runs ahead). A sink uploads an object and its side files, and Fjord's sink a commit's objects, one after " +
			"the other: a restore following a running sink must not read an object before the rest of its commit is there. " +
			"0 reads objects as soon as they are listed (a bucket no sink writes to any more)."})
	format.Define(d)
	partitioner.Define(d)
	return d
}

// compileWhole compiles a Java-style regex that must match a whole name
// (Matcher.matches); "" matches nothing.
func compileWhole(s string) (*regexp.Regexp, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	return regexp.Compile(`^(?:` + s + `)$`)
}

// settings is the parsed config the connector and its tasks run with.
type settings struct {
	pollInterval      time.Duration
	minAge            time.Duration
	batchSize         int
	restorePartitions bool
	topics            map[string]bool
	topicsRe          *regexp.Regexp
	value             format.Format
	keys              format.Format
	headers           format.Format
	layout            partitioner.Layout
	store             storage.Config
}

// parseSettings parses props; the error names every bad key.
func parseSettings(props map[string]string) (*settings, error) {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if problems := crossProblems(props); len(problems) > 0 {
		return nil, problemsError(problems)
	}
	s := &settings{
		pollInterval:      time.Duration(cfg.Long(PollIntervalConfig)) * time.Millisecond,
		minAge:            time.Duration(cfg.Long(MinAgeConfig)) * time.Millisecond,
		batchSize:         int(cfg.Int(BatchMaxSizeConfig)),
		restorePartitions: cfg.Bool(RestorePartitionsConfig),
		topics:            map[string]bool{},
		layout:            partitioner.LayoutFrom(props),
	}
	for _, t := range cfg.List(TopicsConfig) {
		if t != "" {
			s.topics[t] = true
		}
	}
	if s.topicsRe, err = compileWhole(cfg.String(TopicsRegexConfig)); err != nil {
		return nil, err
	}
	if s.value, err = format.New(cfg.String(FormatClassConfig), props); err != nil {
		return nil, err
	}
	keys, err := format.New(cfg.String(KeysFormatClassConfig), props)
	if err != nil {
		return nil, err
	}
	s.keys = format.KeysFormat(keys) // unwraps Parquet's RecordKey{key}
	if s.headers, err = format.New(cfg.String(HeadersFormatClassConfig), props); err != nil {
		return nil, err
	}
	if s.store, err = storage.ConfigFrom(props); err != nil {
		return nil, err
	}
	return s, nil
}

// wants reports whether topic passes the topics / topics.regex filter.
func (s *settings) wants(topic string) bool {
	if len(s.topics) == 0 && s.topicsRe == nil {
		return true
	}
	return s.topics[topic] || (s.topicsRe != nil && s.topicsRe.MatchString(topic))
}

// crossProblems are the storage, format and partitioner packages' checks
// across keys, by key.
func crossProblems(props map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{storage.Validate(props), format.Validate(props), partitioner.Validate(props)} {
		for k, msg := range m {
			if prev, ok := out[k]; ok && prev != msg {
				msg = prev + "; " + msg
			}
			out[k] = msg
		}
	}
	return out
}

func problemsError(problems map[string]string) error {
	e := &connect.ConfigError{}
	for _, k := range sortedKeys(problems) {
		e.Problems = append(e.Problems, connect.ConfigProblem{Key: k, Message: k + ": " + problems[k]})
	}
	return e
}

// validate is ConfigDef().Validate with the cross-key problems added to
// their keys (a key no ConfigDef defines gets an entry of its own).
func validate(props map[string]string) []connect.ConfigValue {
	out := ConfigDef().Validate(props)
	index := map[string]int{}
	for i := range out {
		index[out[i].Name] = i
	}
	problems := crossProblems(props)
	for _, k := range sortedKeys(problems) {
		i, ok := index[k]
		if !ok {
			var v any
			if raw, set := props[k]; set {
				v = raw
			}
			out = append(out, connect.ConfigValue{Name: k, Value: v, Visible: true})
			i = len(out) - 1
			index[k] = i
		}
		// The packages' Validate repeats their keys' own errors, which
		// the ConfigDef already reported.
		if !slices.Contains(out[i].Errors, problems[k]) {
			out[i].Errors = append(out[i].Errors, problems[k])
		}
	}
	return out
}
