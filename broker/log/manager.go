package log

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ManagerConfig holds broker-level log settings (Kafka's names in
// comments). Zero values mean Kafka's defaults.
type ManagerConfig struct {
	Dirs                  []string // log.dirs
	RecoveryThreadsPerDir int      // num.recovery.threads.per.data.dir (1)
	// RetentionCheckInterval is log.retention.check.interval.ms (5 min);
	// it also paces producer-id expiry.
	RetentionCheckInterval time.Duration
	// FlushCheckInterval is how often flush.ms is checked (1 s).
	FlushCheckInterval time.Duration
	// CheckpointInterval is log.flush.offset.checkpoint.interval.ms (60 s):
	// how often recovery points are written.
	CheckpointInterval time.Duration
	CleanerEnable      bool          // log.cleaner.enable (the broker sets true, as Kafka)
	CleanerBackoff     time.Duration // log.cleaner.backoff.ms (15 s)
	// CleanerDedupeBufferSize is log.cleaner.dedupe.buffer.size (128 MiB):
	// the memory bound of the cleaner's key → offset map.
	CleanerDedupeBufferSize int64
	// CleanerIOBufferSize is log.cleaner.io.buffer.size (512 KiB).
	CleanerIOBufferSize int
	// NodeID and ClusterID go into meta.properties of a new dir. When
	// ClusterID is set, an existing meta.properties must match both.
	NodeID    int32
	ClusterID string
	// BrokerEpoch is written into the clean shutdown marker, as Kafka does.
	BrokerEpoch int64
}

func (c ManagerConfig) withDefaults() ManagerConfig {
	if c.RecoveryThreadsPerDir <= 0 {
		c.RecoveryThreadsPerDir = 1
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 5 * time.Minute
	}
	if c.FlushCheckInterval <= 0 {
		c.FlushCheckInterval = time.Second
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = time.Minute
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
	if c.CleanerDedupeBufferSize <= 0 {
		c.CleanerDedupeBufferSize = 128 << 20
	}
	if c.CleanerIOBufferSize <= 0 {
		c.CleanerIOBufferSize = 512 << 10
	}
	return c
}

// Partition is a log the Manager holds.
type Partition struct {
	Topic     string
	Partition int32
	TopicID   [16]byte
	Log       *Log
}

// DirInfo describes one log dir (DescribeLogDirs).
type DirInfo struct {
	Path        string
	DirectoryID string // meta.properties directory.id
	TotalBytes  int64
	UsableBytes int64
	Partitions  []PartitionSize
}

// PartitionSize is a partition's size in a log dir.
type PartitionSize struct {
	Topic     string
	Partition int32
	Size      int64
}

// logDir is one of log.dirs with its checkpoint files.
type logDir struct {
	path        string
	directoryID string
	lock        *os.File
	// mu serialises checkpoint writes; never held while taking Log.mu.
	mu             sync.Mutex
	cleanerOffsets map[TopicPartition]int64
	count          int // partitions here (Create picks the least loaded dir)
}

// Manager owns the logs in log.dirs: loading (recovery in parallel),
// creating and deleting partitions, the dir-level checkpoints, and the
// background work — retention, flush.ms, checkpoints and the cleaner.
//
// Lock order: Manager.mu → logDir.mu. Log methods are called without
// either held, except the cheap atomic accessors.
type Manager struct {
	cfg       ManagerConfig
	configFor func(topic string) Config
	opts      Options
	logger    *slog.Logger

	mu     sync.Mutex
	logs   map[TopicPartition]*managedLog
	dirs   []*logDir
	closed bool

	cancel  context.CancelFunc
	closing chan struct{} // closed by Close
	bg      sync.WaitGroup
	deletes sync.WaitGroup // async removal of deleted partition dirs
	cleaner *cleanerState
}

type managedLog struct {
	log *Log
	dir *logDir
}

// OpenManager locks every dir, loads every partition in it (recovering
// those of a dir without a clean shutdown marker, RecoveryThreadsPerDir at
// a time) and removes the marker. configFor gives a topic's settings.
func OpenManager(mc ManagerConfig, configFor func(topic string) Config, opts Options) (*Manager, error) {
	mc = mc.withDefaults()
	opts = opts.withDefaults()
	if len(mc.Dirs) == 0 {
		return nil, errors.New("open logs: no log.dirs configured")
	}
	if configFor == nil {
		configFor = func(string) Config { return DefaultConfig() }
	}
	m := &Manager{cfg: mc, configFor: configFor, opts: opts, logger: opts.Logger, logs: map[TopicPartition]*managedLog{}, closing: make(chan struct{})}
	m.cleaner = newCleanerState(m)
	for _, path := range mc.Dirs {
		d, err := m.openDir(path)
		if err != nil {
			m.releaseDirs()
			return nil, err
		}
		m.dirs = append(m.dirs, d)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(m.dirs))
	for i, d := range m.dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.loadDir(d)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, ml := range m.logs {
			ml.log.Close()
		}
		m.releaseDirs()
		return nil, err
	}
	return m, nil
}

func (m *Manager) openDir(path string) (*logDir, error) {
	path = filepath.Clean(path)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir %s: %w", path, err)
	}
	lock, err := os.OpenFile(filepath.Join(path, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock log dir %s: %w", path, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("log dir %s is in use by another process (is another broker running on it?): %w", path, err)
	}
	d := &logDir{path: path, lock: lock}
	id, err := m.metaProperties(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	d.directoryID = id
	if d.cleanerOffsets, err = readOffsetCheckpoint(filepath.Join(path, cleanerOffsetFile)); err != nil {
		m.logger.Warn("ignoring unreadable cleaner checkpoint", "dir", path, "err", err)
		d.cleanerOffsets = map[TopicPartition]int64{}
	}
	return d, nil
}

// metaProperties reads the dir's meta.properties, writing one for a new
// dir, and returns its directory.id.
func (m *Manager) metaProperties(dir string) (string, error) {
	path := filepath.Join(dir, metaPropertiesFile)
	b, err := os.ReadFile(path)
	if err == nil {
		props := parseProperties(string(b))
		if m.cfg.ClusterID != "" {
			if c := props["cluster.id"]; c != "" && c != m.cfg.ClusterID {
				return "", fmt.Errorf("log dir %s belongs to cluster %s, not %s: use another dir or the matching cluster id", dir, c, m.cfg.ClusterID)
			}
			if n := props["node.id"]; n != "" && n != fmt.Sprint(m.cfg.NodeID) {
				return "", fmt.Errorf("log dir %s belongs to node.id %s, not %d: use another dir or the matching node.id", dir, n, m.cfg.NodeID)
			}
		}
		return props["directory.id"], nil
	}
	if !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	var sb strings.Builder
	fmt.Fprintf(&sb, "#\n#%s\nnode.id=%d\ndirectory.id=%s\nversion=1\n", time.Now().UTC().Format("Mon Jan 02 15:04:05 MST 2006"), m.cfg.NodeID, id)
	if m.cfg.ClusterID != "" {
		fmt.Fprintf(&sb, "cluster.id=%s\n", m.cfg.ClusterID)
	}
	if err := writeFileAtomic(path, []byte(sb.String())); err != nil {
		return "", err
	}
	return id, nil
}

func parseProperties(s string) map[string]string {
	out := map[string]string{}
	for _, ln := range strings.Split(s, "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" || ln[0] == '#' || ln[0] == '!' {
			continue
		}
		if k, v, ok := strings.Cut(ln, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// loadDir opens every partition of d. After an unclean shutdown each is
// validated from its recovery point.
func (m *Manager) loadDir(d *logDir) error {
	marker := filepath.Join(d.path, cleanShutdownFile)
	_, err := os.Stat(marker)
	clean := err == nil
	rps, err := readOffsetCheckpoint(filepath.Join(d.path, recoveryPointFile))
	if err != nil {
		m.logger.Warn("unreadable recovery point checkpoint, recovering all segments", "dir", d.path, "err", err)
		rps, clean = map[TopicPartition]int64{}, false
	}
	hws, err := readOffsetCheckpoint(filepath.Join(d.path, replicationOffsetFile))
	if err != nil {
		m.logger.Warn("unreadable high watermark checkpoint", "dir", d.path, "err", err)
		hws = map[TopicPartition]int64{}
	}
	lsos, err := readOffsetCheckpoint(filepath.Join(d.path, logStartOffsetFile))
	if err != nil {
		m.logger.Warn("unreadable log start offset checkpoint", "dir", d.path, "err", err)
		lsos = map[TopicPartition]int64{}
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("list log dir %s: %w", d.path, err)
	}
	type job struct {
		tp   TopicPartition
		path string
	}
	var jobs []job
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		path := filepath.Join(d.path, name)
		switch {
		case strings.HasSuffix(name, "-delete"):
			m.logger.Info("removing partition dir left from a deletion", "dir", path)
			m.removeAsync(path)
			continue
		case strings.HasSuffix(name, "-future"), strings.HasSuffix(name, "-stray"):
			m.logger.Warn("ignoring partition dir", "dir", path)
			continue
		case name == "__cluster_metadata-0":
			continue // KRaft's metadata log, not a partition (Kafka skips it too)
		}
		tp, ok := parsePartitionDir(name)
		if !ok {
			continue // not a partition (e.g. a metadata dir)
		}
		jobs = append(jobs, job{tp, path})
	}
	start := time.Now()
	work := make(chan job)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := 0; w < m.cfg.RecoveryThreadsPerDir; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				p := loadParams{clean: clean, recoveryPoint: rps[j.tp], logStartOffset: lsos[j.tp]}
				l, err := openLog(j.path, m.configFor(j.tp.Topic), m.opts, p)
				if hw, ok := hws[j.tp]; ok && err == nil {
					l.SetHighWatermark(min(hw, l.LogEndOffset()))
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					m.register(l, d)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	m.logger.Info("loaded log dir", "dir", d.path, "partitions", len(jobs), "clean_shutdown", clean, "took", time.Since(start).Round(time.Millisecond))
	// Everything is loaded: from now on a crash must recover.
	if err := os.Remove(marker); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove clean shutdown marker: %w", err)
	}
	return syncDir(d.path)
}

// setCleanerOffset records where the cleaner's next dirty section starts
// (cleaner-offset-checkpoint), so a restart does not recompact everything.
func (m *Manager) setCleanerOffset(l *Log, offset int64) {
	d := m.dirOf(l)
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cleanerOffsets[l.tp] = offset
	if err := writeFileAtomic(filepath.Join(d.path, cleanerOffsetFile), encodeOffsetCheckpoint(d.cleanerOffsets)); err != nil {
		m.logger.Warn("write cleaner checkpoint", "dir", d.path, "err", err)
	}
}

func (m *Manager) register(l *Log, d *logDir) {
	if o, ok := d.cleanerOffsets[l.tp]; ok {
		l.cleanedTo.Store(o)
	}
	l.onChange = m.logStartChanged
	m.mu.Lock()
	m.logs[l.tp] = &managedLog{log: l, dir: d}
	d.count++
	m.mu.Unlock()
}

// Get returns the log of a partition, or nil.
func (m *Manager) Get(topic string, partition int32) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml := m.logs[TopicPartition{topic, partition}]; ml != nil {
		return ml.log
	}
	return nil
}

// Create opens the partition's log, creating it in the dir holding the
// fewest partitions (Kafka's placement), and records its topic id in
// partition.metadata. An existing log is returned as is.
func (m *Manager) Create(topic string, partition int32, topicID [16]byte, cfg Config) (*Log, error) {
	tp := TopicPartition{topic, partition}
	if topic == "" || strings.ContainsAny(topic, "/\\") || partition < 0 {
		return nil, fmt.Errorf("create log: invalid partition %q %d", topic, partition)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	if ml := m.logs[tp]; ml != nil {
		m.mu.Unlock()
		if id, ok := ml.log.TopicID(); !ok || id != topicID {
			if err := ml.log.SetTopicID(topicID); err != nil {
				return nil, err
			}
		}
		return ml.log, nil
	}
	d := m.dirs[0]
	for _, x := range m.dirs[1:] {
		if x.count < d.count {
			d = x
		}
	}
	d.count++ // reserve while creating
	m.mu.Unlock()

	l, err := openLog(filepath.Join(d.path, tp.String()), cfg, m.opts, loadParams{clean: true})
	if err == nil {
		if err = l.SetTopicID(topicID); err != nil {
			l.Close()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d.count--
	if err != nil {
		return nil, fmt.Errorf("create log %s: %w", tp, err)
	}
	if ml := m.logs[tp]; ml != nil {
		l.Close() // lost a race with another Create of the same partition
		return ml.log, nil
	}
	l.onChange = m.logStartChanged
	m.logs[tp] = &managedLog{log: l, dir: d}
	d.count++
	m.logger.Info("created log", "partition", tp.String(), "dir", d.path)
	return l, nil
}

// Delete removes a partition's log. As Kafka, the directory is renamed to
// <topic>-<partition>.<uuid>-delete at once and removed in the background
// after file.delete.delay.ms, so in-flight reads finish.
func (m *Manager) Delete(topic string, partition int32) error {
	tp := TopicPartition{topic, partition}
	m.mu.Lock()
	ml := m.logs[tp]
	if ml == nil {
		m.mu.Unlock()
		return nil
	}
	delete(m.logs, tp)
	ml.dir.count--
	m.mu.Unlock()

	l := ml.log
	closeFiles := l.abandon()
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	name := fmt.Sprintf("%s-%d.%x-delete", topic, partition, raw)
	if len(name) > 255 {
		name = name[len(name)-255:]
	}
	target := filepath.Join(ml.dir.path, name)
	if err := os.Rename(l.dir, target); err != nil {
		closeFiles()
		return fmt.Errorf("delete log %s: rename %s: %w", tp, l.dir, err)
	}
	if err := syncDir(ml.dir.path); err != nil {
		m.logger.Warn("fsync log dir after delete", "dir", ml.dir.path, "err", err)
	}
	ml.dir.mu.Lock()
	delete(ml.dir.cleanerOffsets, tp)
	ml.dir.mu.Unlock()
	if err := m.writeCheckpoints(ml.dir); err != nil {
		m.logger.Warn("write checkpoints after delete", "dir", ml.dir.path, "err", err)
	}
	delay := time.Duration(l.config().FileDeleteDelayMs) * time.Millisecond
	m.deletes.Add(1)
	go func() {
		defer m.deletes.Done()
		if delay > 0 {
			// Wait for in-flight reads, but not past shutdown.
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-m.closing:
				t.Stop()
			}
		}
		closeFiles()
		if err := os.RemoveAll(target); err != nil {
			m.logger.Warn("remove deleted partition dir", "dir", target, "err", err)
		}
	}()
	m.logger.Info("deleted log", "partition", tp.String(), "dir", target)
	return nil
}

func (m *Manager) removeAsync(path string) {
	m.deletes.Add(1)
	go func() {
		defer m.deletes.Done()
		if err := os.RemoveAll(path); err != nil {
			m.logger.Warn("remove deleted partition dir", "dir", path, "err", err)
		}
	}()
}

// All lists every log, sorted by topic and partition.
func (m *Manager) All() []Partition {
	m.mu.Lock()
	out := make([]Partition, 0, len(m.logs))
	for tp, ml := range m.logs {
		out = append(out, Partition{Topic: tp.Topic, Partition: tp.Partition, Log: ml.log})
	}
	m.mu.Unlock()
	for i := range out {
		out[i].TopicID, _ = out[i].Log.TopicID()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// DirInfo describes every log dir: space and partition sizes.
func (m *Manager) DirInfo() []DirInfo {
	m.mu.Lock()
	out := make([]DirInfo, len(m.dirs))
	idx := map[*logDir]int{}
	for i, d := range m.dirs {
		out[i] = DirInfo{Path: d.path, DirectoryID: d.directoryID, TotalBytes: -1, UsableBytes: -1}
		idx[d] = i
	}
	for tp, ml := range m.logs {
		i := idx[ml.dir]
		out[i].Partitions = append(out[i].Partitions, PartitionSize{Topic: tp.Topic, Partition: tp.Partition, Size: ml.log.Size()})
	}
	m.mu.Unlock()
	for i := range out {
		var st syscall.Statfs_t
		if err := syscall.Statfs(out[i].Path, &st); err == nil {
			out[i].TotalBytes = int64(st.Blocks) * int64(st.Bsize)
			out[i].UsableBytes = int64(st.Bavail) * int64(st.Bsize)
		}
		sort.Slice(out[i].Partitions, func(a, b int) bool {
			pa, pb := out[i].Partitions[a], out[i].Partitions[b]
			if pa.Topic != pb.Topic {
				return pa.Topic < pb.Topic
			}
			return pa.Partition < pb.Partition
		})
	}
	return out
}

func (m *Manager) logsIn(d *logDir) []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Log
	for _, ml := range m.logs {
		if ml.dir == d {
			out = append(out, ml.log)
		}
	}
	return out
}

func (m *Manager) dirOf(l *Log) *logDir {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ml := m.logs[l.tp]; ml != nil && ml.log == l {
		return ml.dir
	}
	return nil
}

// logStartChanged persists a moved log start offset (DeleteRecords,
// retention) so a restart does not serve deleted records again.
func (m *Manager) logStartChanged(l *Log) {
	d := m.dirOf(l)
	if d == nil {
		return
	}
	if err := m.writeLogStartCheckpoint(d); err != nil {
		m.logger.Warn("write log start offset checkpoint", "dir", d.path, "err", err)
	}
}

func (m *Manager) writeLogStartCheckpoint(d *logDir) error {
	logs := m.logsIn(d)
	lsos := map[TopicPartition]int64{}
	for _, l := range logs {
		// Kafka records only starts past the first segment's base.
		if lso := l.LogStartOffset(); lso > l.segments()[0].base {
			lsos[l.tp] = lso
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return writeFileAtomic(filepath.Join(d.path, logStartOffsetFile), encodeOffsetCheckpoint(lsos))
}

// writeCheckpoints writes the dir's recovery points, log start offsets and
// cleaner offsets.
func (m *Manager) writeCheckpoints(d *logDir) error {
	logs := m.logsIn(d)
	rps := make(map[TopicPartition]int64, len(logs))
	hws := map[TopicPartition]int64{}
	for _, l := range logs {
		rps[l.tp] = l.RecoveryPoint()
		if hw, ok := l.HighWatermark(); ok {
			hws[l.tp] = hw
		}
	}
	d.mu.Lock()
	for _, l := range logs {
		if o := l.cleanerOffset(); o >= 0 {
			d.cleanerOffsets[l.tp] = o
		}
	}
	err := writeFileAtomic(filepath.Join(d.path, recoveryPointFile), encodeOffsetCheckpoint(rps))
	if err == nil && len(hws) > 0 {
		err = writeFileAtomic(filepath.Join(d.path, replicationOffsetFile), encodeOffsetCheckpoint(hws))
	}
	if err == nil {
		err = writeFileAtomic(filepath.Join(d.path, cleanerOffsetFile), encodeOffsetCheckpoint(d.cleanerOffsets))
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	return m.writeLogStartCheckpoint(d)
}

// Start runs the background work until ctx ends or Close: retention and
// producer expiry, flush.ms, checkpoints and (if enabled) the cleaner.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	if m.closed || m.cancel != nil {
		m.mu.Unlock()
		return
	}
	ctx, m.cancel = context.WithCancel(ctx)
	m.mu.Unlock()
	m.every(ctx, m.cfg.RetentionCheckInterval, m.RunRetention)
	m.every(ctx, m.cfg.FlushCheckInterval, m.flushByTime)
	m.every(ctx, m.cfg.CheckpointInterval, func() {
		for _, d := range m.dirs {
			if err := m.writeCheckpoints(d); err != nil {
				m.logger.Warn("write checkpoints", "dir", d.path, "err", err)
			}
		}
	})
	if m.cfg.CleanerEnable {
		m.every(ctx, m.cfg.CleanerBackoff, func() { m.cleaner.runOnce(ctx) })
	}
}

func (m *Manager) every(ctx context.Context, d time.Duration, fn func()) {
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// RunRetention applies retention to every log now (the background loop
// calls it every RetentionCheckInterval).
func (m *Manager) RunRetention() {
	for _, p := range m.All() {
		p.Log.unloadIdleIndexes(10 * time.Minute)
		if n, err := p.Log.DeleteOldSegments(); err != nil && !errors.Is(err, ErrClosed) {
			m.logger.Warn("retention", "partition", p.Log.tp.String(), "err", err)
		} else if n > 0 {
			m.logger.Info("retention deleted segments", "partition", p.Log.tp.String(), "segments", n)
		}
	}
}

func (m *Manager) flushByTime() {
	now := m.opts.Now().UnixMilli()
	for _, p := range m.All() {
		if err := p.Log.maybeFlushByTime(now); err != nil {
			m.logger.Warn("flush", "partition", p.Log.tp.String(), "err", err)
		}
	}
}

// Close stops the background work, closes every log (flushing it),
// writes the checkpoints and a clean shutdown marker in every dir whose
// logs all closed cleanly, and unlocks the dirs.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	cancel := m.cancel
	close(m.closing)
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	m.bg.Wait()
	var errs []error
	for _, d := range m.dirs {
		logs := m.logsIn(d)
		derrs := make([]error, len(logs))
		var wg sync.WaitGroup
		sem := make(chan struct{}, m.cfg.RecoveryThreadsPerDir)
		for i, l := range logs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				derrs[i] = l.Close()
			}()
		}
		wg.Wait()
		err := errors.Join(derrs...)
		if err == nil {
			err = m.writeCheckpoints(d)
		}
		if err == nil {
			marker := fmt.Sprintf(`{"version":0,"brokerEpoch":%d}`, m.cfg.BrokerEpoch)
			err = writeFileAtomic(filepath.Join(d.path, cleanShutdownFile), []byte(marker))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("close log dir %s: %w", d.path, err))
		}
	}
	m.deletes.Wait()
	m.releaseDirs()
	return errors.Join(errs...)
}

func (m *Manager) releaseDirs() {
	for _, d := range m.dirs {
		if d.lock != nil {
			syscall.Flock(int(d.lock.Fd()), syscall.LOCK_UN)
			d.lock.Close()
			d.lock = nil
		}
	}
}
