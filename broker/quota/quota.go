// Package quota enforces client byte-rate quotas as Kafka's
// ClientQuotaManager does (KIP-13, KIP-55, KIP-219): each (user,
// client-id) is measured against the quota that applies to it, over
// quota.window.num samples of quota.window.size.seconds, and a client
// over its quota is told how long to back off (throttle_time_ms) while
// the broker stops reading its connection for that long.
//
// Quotas come from the metadata image (metadata.ClientQuotas): a Manager
// per quota key (producer_byte_rate for Produce, consumer_byte_rate for
// Fetch) resolves them with Kafka's precedence:
//
//	/users/<user>/clients/<client-id>
//	/users/<user>/clients/<default>
//	/users/<user>
//	/users/<default>/clients/<client-id>
//	/users/<default>/clients/<default>
//	/users/<default>
//	/clients/<client-id>
//	/clients/<default>
//
// Clients sharing the entity whose quota applies share one rate (a user
// quota is the user's total over all its client ids), as Kafka's sensors
// keyed by quota metric tags are. Without any quota for its key a Manager
// does nothing: Record is an atomic load and a nil check.
package quota

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Kafka's defaults: quota.window.num, quota.window.size.seconds, and the
// idle time after which a client's sensors are dropped
// (ClientQuotaManager.InactiveSensorExpirationTimeSeconds).
const (
	DefaultSamples      = 11
	DefaultWindow       = time.Second
	DefaultSensorExpiry = time.Hour
)

// Config is the measurement window.
type Config struct {
	// Samples is quota.window.num (at least 1; default 11).
	Samples int
	// Window is quota.window.size.seconds (default 1 s).
	Window time.Duration
	// SensorExpiry drops the rate of a client idle this long (default
	// 1 h), so sensors and metric series of gone clients do not pile up.
	SensorExpiry time.Duration
}

func (c Config) withDefaults() Config {
	if c.Samples < 1 {
		c.Samples = DefaultSamples
	}
	c.Samples = min(c.Samples, MaxSamples)
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.SensorExpiry <= 0 {
		c.SensorExpiry = DefaultSensorExpiry
	}
	return c
}

// Tags are Kafka's quota metric tags: the user and client id a rate is
// kept for ("" when the applying quota does not depend on that part).
type Tags struct {
	User, ClientID string
}

// Manager measures one kind of traffic (Produce or Fetch bytes) against
// one quota key. It is safe for concurrent use.
type Manager struct {
	key    string // producer_byte_rate or consumer_byte_rate
	kind   string // metrics label: "produce" or "fetch"
	cfg    Config
	winMs  int64
	src    atomic.Pointer[metadata.ClientQuotas] // last image state seen
	limits atomic.Pointer[limits]                // nil: no quota for key
	metr   *Metrics

	mu        sync.Mutex
	sensors   map[Tags]*sensor
	lastSweep int64 // ms
}

// limits are the quotas for the Manager's key, by entity.
type limits struct {
	byEntity map[metadata.QuotaEntity]float64
}

// NewManager returns a Manager for quota key (the Kafka quota name:
// "producer_byte_rate", "consumer_byte_rate"); kind labels its metrics;
// m may be nil.
func NewManager(key, kind string, cfg Config, m *Metrics) *Manager {
	cfg = cfg.withDefaults()
	return &Manager{key: key, kind: kind, cfg: cfg, winMs: cfg.Window.Milliseconds(), metr: m, sensors: map[Tags]*sensor{}}
}

// Update makes the Manager enforce the quotas in q (the image's client
// quotas). It is cheap when q is the state already applied, so callers
// pass the current image's pointer on every request.
func (m *Manager) Update(q *metadata.ClientQuotas) {
	if m.src.Load() == q {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.src.Load() == q {
		return
	}
	var l *limits
	if q != nil {
		for e, keys := range q.Entities {
			if v, ok := keys[m.key]; ok {
				if l == nil {
					l = &limits{byEntity: map[metadata.QuotaEntity]float64{}}
				}
				l.byEntity[e] = v
			}
		}
	}
	m.limits.Store(l)
	m.src.Store(q)
	if l == nil {
		// No quota left: forget every rate (and its metric series).
		for t := range m.sensors {
			m.dropSensor(t)
		}
	}
}

// Active reports whether any quota applies to this Manager's key: when
// false, Record returns 0 without looking at its arguments, so callers
// can skip computing them.
func (m *Manager) Active() bool { return m.limits.Load() != nil }

var (
	defaultUser       = metadata.QuotaEntity{User: metadata.QuotaDefault}
	defaultClient     = metadata.QuotaEntity{Client: metadata.QuotaDefault}
	defaultUserClient = metadata.QuotaEntity{User: metadata.QuotaDefault, Client: metadata.QuotaDefault}
)

// resolve is DefaultQuotaCallback.quotaMetricTags then quotaLimit: the
// tags the client's rate is kept under and the quota that applies, in
// Kafka's precedence order; ok is false when no quota applies.
func (l *limits) resolve(userName, clientID string) (Tags, float64, bool) {
	has := func(e metadata.QuotaEntity) bool { _, ok := l.byEntity[e]; return ok }
	u := metadata.QuotaEntity{User: metadata.QuotaNamed, UserName: userName}
	uc := metadata.QuotaEntity{User: metadata.QuotaNamed, UserName: userName, Client: metadata.QuotaNamed, ClientName: clientID}
	udc := metadata.QuotaEntity{User: metadata.QuotaNamed, UserName: userName, Client: metadata.QuotaDefault}
	duc := metadata.QuotaEntity{User: metadata.QuotaDefault, Client: metadata.QuotaNamed, ClientName: clientID}
	c := metadata.QuotaEntity{Client: metadata.QuotaNamed, ClientName: clientID}
	var tags Tags
	switch {
	case has(uc), has(udc):
		tags = Tags{userName, clientID}
	case has(u):
		tags = Tags{userName, ""}
	case has(duc), has(defaultUserClient):
		tags = Tags{userName, clientID}
	case has(defaultUser):
		tags = Tags{userName, ""}
	default:
		tags = Tags{"", clientID}
	}
	first := func(es ...metadata.QuotaEntity) (float64, bool) {
		for _, e := range es {
			if v, ok := l.byEntity[e]; ok {
				return v, true
			}
		}
		return 0, false
	}
	var v float64
	var ok bool
	switch {
	case tags.User != "" && tags.ClientID != "":
		v, ok = first(uc, udc, duc, defaultUserClient)
	case tags.User != "":
		v, ok = first(u, defaultUser)
	case tags.ClientID != "":
		v, ok = first(c, defaultClient)
	}
	return tags, v, ok
}

// Quota returns the quota that applies to (user, clientID) and the tags
// its rate is kept under; ok is false when none applies.
func (m *Manager) Quota(userName, clientID string) (tags Tags, bound float64, ok bool) {
	l := m.limits.Load()
	if l == nil {
		return Tags{}, 0, false
	}
	return l.resolve(userName, clientID)
}

// Record adds value (bytes) to the client's rate at now and returns how
// long the client must back off: zero while the rate is within its
// quota, else Kafka's QuotaUtils.throttleTime, (rate - quota) / quota *
// window, the time for the rate to fall back to the quota if nothing
// more is recorded. Like Kafka's ClientQuotaManager, the bandwidth
// throttle is not capped by the window (only Kafka's request-time quota
// is); it is capped at math.MaxInt32 ms, the wire field's range.
//
// With undo, a throttled value is taken back out of the rate (Kafka's
// unrecordQuotaSensor): a throttled fetch is answered empty, so its
// bytes were never sent.
func (m *Manager) Record(userName, clientID string, value float64, now time.Time, undo bool) time.Duration {
	l := m.limits.Load()
	if l == nil {
		return 0
	}
	tags, bound, ok := l.resolve(userName, clientID)
	if !ok {
		return 0
	}
	nowMs := now.UnixMilli()
	m.mu.Lock()
	s := m.sensor(tags, nowMs)
	s.record(value, nowMs)
	rate := s.rate(nowMs)
	var throttleMs int64
	if rate > bound {
		// QuotaUtils.throttleTime: Math.round(difference / bound * windowSize).
		throttleMs = int64(math.Min(math.Round((rate-bound)/bound*float64(s.windowSize(nowMs))), math.MaxInt32))
		if undo {
			s.record(-value, nowMs)
		}
	}
	s.sent(value, undo && throttleMs > 0, throttleMs)
	m.maybeSweep(nowMs)
	m.mu.Unlock()
	return time.Duration(throttleMs) * time.Millisecond
}

// MaxValueInWindow is Kafka's getMaxValueInQuotaWindow: the most that
// can be recorded at once without certain throttling, quota * (samples -
// 1) * window seconds; +Inf when no quota applies. A fetch's max_bytes is
// capped by it, so one response cannot exceed what the quota allows.
func (m *Manager) MaxValueInWindow(userName, clientID string) float64 {
	l := m.limits.Load()
	if l == nil {
		return math.Inf(1)
	}
	_, bound, ok := l.resolve(userName, clientID)
	if !ok {
		return math.Inf(1)
	}
	return bound * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds()
}

// sensor returns the rate kept under tags, creating it. m.mu is held.
func (m *Manager) sensor(t Tags, nowMs int64) *sensor {
	s := m.sensors[t]
	if s == nil {
		s = &sensor{samples: m.cfg.Samples, winMs: m.winMs}
		if m.metr != nil {
			s.bytes, s.throttleMs, s.throttled = m.metr.children(m.kind, t)
		}
		m.sensors[t] = s
	}
	s.lastUse = nowMs
	return s
}

// maybeSweep drops the sensors idle for SensorExpiry, checking at most
// every 30 s (Kafka's Metrics expiration thread interval). m.mu is held.
func (m *Manager) maybeSweep(nowMs int64) {
	expiry := m.cfg.SensorExpiry.Milliseconds()
	if nowMs-m.lastSweep < min(expiry, 30_000) {
		return
	}
	m.lastSweep = nowMs
	for t, s := range m.sensors {
		if nowMs-s.lastUse >= expiry {
			m.dropSensor(t)
		}
	}
}

func (m *Manager) dropSensor(t Tags) {
	delete(m.sensors, t)
	if m.metr != nil {
		m.metr.remove(m.kind, t)
	}
}

// Sensors returns the number of rates kept (for tests).
func (m *Manager) Sensors() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sensors)
}
