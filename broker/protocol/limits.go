package protocol

import (
	"net"
	"sync"
)

// connLimits enforces max.connections (the acceptors wait for a free
// slot) and max.connections.per.ip (a connection over its address's
// limit is closed as soon as it is accepted), as Kafka's acceptor does.
type connLimits struct {
	slots     chan struct{} // nil: no max.connections
	stop      chan struct{}
	stopOnce  sync.Once
	perIP     int
	overrides map[string]int

	mu   sync.Mutex
	byIP map[string]int
}

func (l *connLimits) init(cfg Config) {
	l.stop = make(chan struct{})
	if cfg.MaxConnections > 0 {
		l.slots = make(chan struct{}, cfg.MaxConnections)
	}
	l.perIP = cfg.MaxConnectionsPerIP
	l.overrides = map[string]int{}
	for host, n := range cfg.MaxConnectionsPerIPOverrides {
		l.overrides[host] = n
	}
	l.byIP = map[string]int{}
}

// acquire takes a connection slot, waiting while max.connections are
// open; false once the server is shutting down.
func (l *connLimits) acquire() bool {
	if l.slots == nil {
		select {
		case <-l.stop:
			return false
		default:
			return true
		}
	}
	select {
	case l.slots <- struct{}{}:
		return true
	case <-l.stop:
		return false
	}
}

func (l *connLimits) release() {
	if l.slots != nil {
		<-l.slots
	}
}

// admitIP counts a new connection against its address's limit; false
// means the address is over it (the slot is not counted).
func (l *connLimits) admitIP(a net.Addr) (string, bool) {
	ip := ""
	if ta, ok := a.(*net.TCPAddr); ok {
		ip = ta.IP.String()
	} else if a != nil {
		ip, _, _ = net.SplitHostPort(a.String())
	}
	// An override applies exactly (0 refuses the address); otherwise
	// max.connections.per.ip, where 0 means no limit.
	limit, ok := l.overrides[ip]
	if !ok {
		limit = l.perIP
		if limit <= 0 {
			limit = -1
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if limit >= 0 && l.byIP[ip] >= limit {
		return ip, false
	}
	l.byIP[ip]++
	return ip, true
}

// done releases a connection's slot and its address's count.
func (l *connLimits) done(ip string) {
	l.mu.Lock()
	if l.byIP[ip]--; l.byIP[ip] <= 0 {
		delete(l.byIP, ip)
	}
	l.mu.Unlock()
	l.release()
}

func (l *connLimits) shutdown() { l.stopOnce.Do(func() { close(l.stop) }) }
