package datagen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// Config keys: Confluent datagen's, then Fjord's.
const (
	KafkaTopicConfig     = "kafka.topic"
	MaxIntervalConfig    = "max.interval"
	IterationsConfig     = "iterations"
	SchemaStringConfig   = "schema.string"
	SchemaFilenameConfig = "schema.filename"
	SchemaKeyfieldConfig = "schema.keyfield"
	QuickstartConfig     = "quickstart"
	RandomSeedConfig     = "random.seed"
	RateConfig           = "rate"
	CountConfig          = "count"
	SeedConfig           = "seed"
	ValueSchemaConfig    = "value.schema"
	KeySchemaConfig      = "key.schema"
	BatchSizeConfig      = "batch.size"
	// Set by the connector in task configs.
	TaskIDConfig    = "task.id"
	TaskCountConfig = "task.count"

	DefaultBatchSize = 1000
	groupConfluent   = "Datagen"
	groupFjord       = "Fjord"
)

// ConfigDef returns the datagen connector's keys.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	order := 0
	def := func(k connect.ConfigKey) {
		order++
		k.OrderInGroup = order
		d.Define(k)
	}
	def(connect.ConfigKey{Name: KafkaTopicConfig, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString,
		Importance: connect.High, Group: groupConfluent, Doc: "Topic to write to"})
	def(connect.ConfigKey{Name: MaxIntervalConfig, Type: connect.TypeLong, Default: int64(500), Importance: connect.High, Group: groupConfluent,
		Doc: "Max interval between messages (ms): each task waits a random time up to this long before each record, as Confluent's datagen. Ignored when rate is set; 0 or less means no wait."})
	def(connect.ConfigKey{Name: IterationsConfig, Type: connect.TypeInt, Default: int32(-1), Importance: connect.High, Group: groupConfluent,
		Doc: "Number of messages to send from each task, or less than 1 for unlimited. A task that is done stays idle (Confluent's fails)."})
	def(connect.ConfigKey{Name: SchemaStringConfig, Type: connect.TypeString, Default: "", Importance: connect.High, Group: groupConfluent,
		Doc: "The literal JSON-encoded Avro schema to use. Not supported by Fjord: use quickstart or value.schema."})
	def(connect.ConfigKey{Name: SchemaFilenameConfig, Type: connect.TypeString, Default: "", Importance: connect.High, Group: groupConfluent,
		Doc: "Filename of schema to use. Not supported by Fjord: use quickstart or value.schema."})
	def(connect.ConfigKey{Name: SchemaKeyfieldConfig, Type: connect.TypeString, Default: "", Importance: connect.High, Group: groupConfluent,
		Doc: "Name of field to use as the message key. Defaults to the quickstart's key field; without one (and without key.schema) keys are null."})
	def(connect.ConfigKey{Name: QuickstartConfig, Type: connect.TypeString, Default: "", Validator: validateQuickstart,
		Importance: connect.High, Group: groupConfluent,
		Doc: "Name of quickstart to use: " + strings.Join(quickstartNames(), ", ") + " (Confluent datagen's schemas)",
		Recommended: func(map[string]any) []any {
			var out []any
			for _, n := range quickstartNames() {
				out = append(out, n)
			}
			return out
		}})
	def(connect.ConfigKey{Name: RandomSeedConfig, Type: connect.TypeLong, Default: nil, Importance: connect.Low, Group: groupConfluent,
		Doc: "Numeric seed for generating random data. Two connectors started with the same seed will deterministically produce the same data. Same as seed."})
	def(connect.ConfigKey{Name: RateConfig, Type: connect.TypeDouble, Default: nil, Validator: connect.AtLeast(0), Importance: connect.High, Group: groupFjord,
		Doc: "Records per second for the whole connector, split evenly across its tasks; 0 means as fast as possible. When set, max.interval is ignored."})
	def(connect.ConfigKey{Name: CountConfig, Type: connect.TypeLong, Default: nil, Importance: connect.High, Group: groupFjord,
		Doc: "Total number of records the connector generates, split across its tasks (task i of n generates the sequence numbers i, i+n, i+2n, ...); unset or less than 1 means unlimited. Tasks that are done stay idle."})
	def(connect.ConfigKey{Name: SeedConfig, Type: connect.TypeLong, Default: nil, Importance: connect.Medium, Group: groupFjord,
		Doc: "Seed of the generated data: record number N is the same on every run with the same seed, whatever tasks.max is. Unset: the connector picks one when it starts and hands it to its tasks, so restarted tasks continue the same data."})
	def(connect.ConfigKey{Name: ValueSchemaConfig, Type: connect.TypeString, Default: "", Validator: validateSpec, Importance: connect.High, Group: groupFjord,
		Doc: "Generated values instead of a quickstart: fields NAME:TYPE[:GENERATOR] separated by commas (a STRUCT), or one TYPE[:GENERATOR] (a primitive). " + specDoc})
	def(connect.ConfigKey{Name: KeySchemaConfig, Type: connect.TypeString, Default: "", Validator: validateSpec, Importance: connect.Medium, Group: groupFjord,
		Doc: "Generated keys, in value.schema's notation, instead of a value field (schema.keyfield)."})
	def(connect.ConfigKey{Name: BatchSizeConfig, Type: connect.TypeInt, Default: int32(DefaultBatchSize), Validator: connect.AtLeast(1),
		Importance: connect.Low, Group: groupFjord, Doc: "The maximum number of records a task returns from one poll when it is not waiting between records."})
	def(connect.ConfigKey{Name: TaskIDConfig, Type: connect.TypeInt, Default: int32(0), Internal: true, Importance: connect.Low, Doc: "Set by the connector: the task's number."})
	def(connect.ConfigKey{Name: TaskCountConfig, Type: connect.TypeInt, Default: int32(1), Internal: true, Importance: connect.Low, Doc: "Set by the connector: the number of tasks."})
	return d
}

const specDoc = "Types: int8, int16, int32, int64, float32, float64, boolean, string, bytes, timestamp. " +
	"Generators: seq (sequence number), MIN..MAX (uniform; a length for string and bytes), a|b|c (one of), now, " +
	"templates such as User_{1..9} or order-{seq}, or a constant. " +
	"Example: id:int64:seq,user:string:User_{1..9},amount:float64:0..100,ok:boolean"

func validateQuickstart(name string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	if _, ok := quickstarts[strings.ToLower(s)]; !ok {
		return fmt.Errorf("%s must be one out of %s", name, quickstartList())
	}
	return nil
}

func validateSpec(name string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	_, err := parseSpec(s, "")
	return err
}

// settings is a parsed, cross-checked config.
type settings struct {
	topic       string
	maxInterval int64
	iterations  int64 // per task; 0 unlimited
	count       int64 // whole connector; 0 unlimited
	rate        float64
	rateSet     bool
	seed        int64
	seedSet     bool
	batchSize   int
	value       *spec
	key         *spec // generated key, or nil
	keyField    int   // index of the value field used as key, or -1
	taskID      int
	taskCount   int
}

// crossCheck finds the problems that involve several keys, from the raw
// props, so that the validate endpoint reports them even when single
// keys are also wrong. Keys whose own value is invalid are skipped: their
// validators report them.
func crossCheck(props map[string]string) map[string][]string {
	problems := map[string][]string{}
	add := func(k, msg string) { problems[k] = append(problems[k], msg) }
	get := func(k string) string { return strings.TrimSpace(props[k]) }

	seed, errS := strconv.ParseInt(get(SeedConfig), 10, 64)
	rseed, errR := strconv.ParseInt(get(RandomSeedConfig), 10, 64)
	if errS == nil && errR == nil && seed != rseed {
		msg := "seed and random.seed are the same setting: set one of them"
		add(SeedConfig, msg)
		add(RandomSeedConfig, msg)
	}

	// Exactly one source of values, as Confluent's "Must set exactly one of".
	for _, k := range []string{SchemaStringConfig, SchemaFilenameConfig} {
		if get(k) != "" {
			add(k, "Avro schemas with arg.properties are not supported by Fjord's datagen: use quickstart or value.schema")
		}
	}
	sources := 0
	for _, k := range []string{QuickstartConfig, ValueSchemaConfig, SchemaStringConfig, SchemaFilenameConfig} {
		if get(k) != "" {
			sources++
		}
	}
	if sources != 1 {
		msg := "Must set exactly one of " + strings.Join([]string{QuickstartConfig, ValueSchemaConfig, SchemaStringConfig, SchemaFilenameConfig}, ", ")
		for _, k := range []string{QuickstartConfig, ValueSchemaConfig} {
			if sources == 0 || get(k) != "" {
				add(k, msg)
			}
		}
	}

	if get(KeySchemaConfig) != "" && get(SchemaKeyfieldConfig) != "" {
		msg := "Set only one of key.schema and schema.keyfield"
		add(KeySchemaConfig, msg)
		add(SchemaKeyfieldConfig, msg)
	}
	if kf := get(SchemaKeyfieldConfig); kf != "" && sources == 1 {
		if v, err := valueSpec(props); err == nil && v != nil && (!v.struct_ || v.schema.Field(kf) == nil) {
			add(SchemaKeyfieldConfig, "The schema does not contain the field provided in '"+SchemaKeyfieldConfig+"'")
		}
	}
	return problems
}

// valueSpec returns the spec of the configured values (nil when none).
func valueSpec(props map[string]string) (*spec, error) {
	if qs := strings.ToLower(strings.TrimSpace(props[QuickstartConfig])); qs != "" {
		q, ok := quickstarts[qs]
		if !ok {
			return nil, fmt.Errorf("unknown quickstart %q", qs)
		}
		return q.spec(), nil
	}
	if vs := strings.TrimSpace(props[ValueSchemaConfig]); vs != "" {
		return parseSpec(vs, "")
	}
	return nil, nil
}

// parse checks props and returns the settings.
func parse(props map[string]string) (*settings, error) {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if p := crossCheck(props); len(p) > 0 {
		return nil, problemsError(p)
	}
	s := &settings{
		topic:       cfg.String(KafkaTopicConfig),
		maxInterval: cfg.Long(MaxIntervalConfig),
		batchSize:   int(cfg.Int(BatchSizeConfig)),
		keyField:    -1,
		taskID:      int(cfg.Int(TaskIDConfig)),
		taskCount:   max(int(cfg.Int(TaskCountConfig)), 1),
	}
	if n := cfg.Int(IterationsConfig); n > 0 {
		s.iterations = int64(n)
	}
	if !cfg.IsNull(CountConfig) && cfg.Long(CountConfig) > 0 {
		s.count = cfg.Long(CountConfig)
	}
	if !cfg.IsNull(RateConfig) {
		s.rate, s.rateSet = cfg.Double(RateConfig), true
	}
	switch {
	case !cfg.IsNull(SeedConfig):
		s.seed, s.seedSet = cfg.Long(SeedConfig), true
	case !cfg.IsNull(RandomSeedConfig):
		s.seed, s.seedSet = cfg.Long(RandomSeedConfig), true
	}
	if s.value, err = valueSpec(props); err != nil || s.value == nil {
		return nil, fmt.Errorf("datagen value schema: %v", err)
	}
	if ks := cfg.String(KeySchemaConfig); ks != "" {
		if s.key, err = parseSpec(ks, ""); err != nil {
			return nil, fmt.Errorf("datagen key schema: %w", err)
		}
	}
	keyField := cfg.String(SchemaKeyfieldConfig)
	if qs := strings.ToLower(cfg.String(QuickstartConfig)); qs != "" && keyField == "" && s.key == nil {
		keyField = quickstarts[qs].keyField
	}
	if keyField != "" {
		s.keyField = s.value.schema.Field(keyField).Index
	}
	return s, nil
}

func problemsError(p map[string][]string) error {
	ce := &connect.ConfigError{}
	for _, k := range ConfigDef().Keys() {
		for _, m := range p[k.Name] {
			ce.Problems = append(ce.Problems, connect.ConfigProblem{Key: k.Name, Message: m})
		}
	}
	return ce
}
