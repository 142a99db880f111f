package broker

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/broker/wire"
)

// supportedSASLMechanisms are the mechanisms Fjord's listeners serve.
var supportedSASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// listenerProps looks a key up as Kafka does for one listener: the
// listener.name.<listener>.<key> override first, then the broker-wide key.
type listenerProps struct {
	props    map[string]string
	listener string // lower case, as Kafka's prefixes spell it
}

func newListenerProps(props map[string]string, listener string) listenerProps {
	return listenerProps{props: props, listener: strings.ToLower(listener)}
}

func (p listenerProps) get(key string) string {
	if v, ok := p.props["listener.name."+p.listener+"."+key]; ok {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(p.props[key])
}

// withDefault is get with Kafka's default for an unset key.
func (p listenerProps) withDefault(key, def string) string {
	if _, ok := p.props["listener.name."+p.listener+"."+key]; ok {
		return p.get(key)
	}
	if _, ok := p.props[key]; ok {
		return p.get(key)
	}
	return def
}

// listenerSecurity builds a client listener's security settings from its
// security protocol and the ssl.* / sasl.* keys (nil for PLAINTEXT).
func listenerSecurity(props map[string]string, l config.Listener, reauth time.Duration) (*protocol.Security, error) {
	proto := l.SecurityProtocol
	if proto == "" {
		proto = "PLAINTEXT"
	}
	sec := &protocol.Security{Listener: l.Name, Protocol: proto}
	p := newListenerProps(props, l.Name)
	switch proto {
	case "PLAINTEXT":
		return nil, nil
	case "SSL", "SASL_SSL":
		// Kafka parses the rules at start-up: a bad rule refuses to start.
		mapper, err := protocol.ParsePrincipalMappingRules(p.withDefault("ssl.principal.mapping.rules", "DEFAULT"))
		if err != nil {
			return nil, fmt.Errorf("listener %s: ssl.principal.mapping.rules: %w", l.Name, err)
		}
		sec.PrincipalMapper = mapper
		cfg, err := protocol.ServerTLSConfig(p.get)
		if err != nil {
			return nil, fmt.Errorf("listener %s (%s): %w", l.Name, proto, err)
		}
		sec.TLS = cfg
	case "SASL_PLAINTEXT":
	default:
		return nil, fmt.Errorf("listener %s: unknown security protocol %q (use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", l.Name, proto)
	}
	if proto == "SSL" {
		return sec, nil
	}
	sasl, err := listenerSASL(p, l.Name, reauth)
	if err != nil {
		return nil, fmt.Errorf("listener %s (%s): %w", l.Name, proto, err)
	}
	sec.SASL = sasl
	return sec, nil
}

func listenerSASL(p listenerProps, name string, reauth time.Duration) (*protocol.SASLConfig, error) {
	cfg := &protocol.SASLConfig{SessionLifetime: reauth}
	if v := p.get("sasl.server.max.receive.size"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("sasl.server.max.receive.size=%q: must be a positive number of bytes", v)
		}
		cfg.MaxReceiveSize = int32(n)
	}
	for _, m := range strings.Split(p.withDefault("sasl.enabled.mechanisms", "GSSAPI"), ",") {
		m = strings.ToUpper(strings.TrimSpace(m))
		if m == "" {
			continue
		}
		if !slices.Contains(supportedSASLMechanisms, m) {
			return nil, fmt.Errorf("SASL mechanism %s is not supported: set sasl.enabled.mechanisms (or listener.name.%s.sasl.enabled.mechanisms) to some of %s",
				m, strings.ToLower(name), strings.Join(supportedSASLMechanisms, ","))
		}
		cfg.Mechanisms = append(cfg.Mechanisms, m)
	}
	if len(cfg.Mechanisms) == 0 {
		return nil, errors.New("no SASL mechanism enabled: set sasl.enabled.mechanisms")
	}
	if slices.Contains(cfg.Mechanisms, "PLAIN") {
		// Kafka reads listener.name.<l>.plain.sasl.jaas.config; Fjord
		// also takes the broker-wide sasl.jaas.config.
		raw := p.get("plain.sasl.jaas.config")
		if raw == "" {
			raw = p.get("sasl.jaas.config")
		}
		if raw == "" {
			return nil, fmt.Errorf("PLAIN needs its users: set listener.name.%s.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>=\"<password>\";", strings.ToLower(name))
		}
		j, err := protocol.ParseJAAS(raw)
		if err != nil {
			return nil, err
		}
		if !strings.HasSuffix(j.LoginModule, "PlainLoginModule") {
			return nil, fmt.Errorf("the PLAIN JAAS config names %s: use org.apache.kafka.common.security.plain.PlainLoginModule", j.LoginModule)
		}
		cfg.Plain = protocol.PlainUsersFromJAAS(j)
	}
	return cfg, nil
}

// limitOrZero maps Kafka's "no limit" (Integer.MAX_VALUE) and anything
// out of range to 0, the protocol server's "no limit".
func limitOrZero(n int64) int {
	if n <= 0 || n >= 1<<31-1 {
		return 0
	}
	return int(n)
}

// parsePerIPOverrides parses max.connections.per.ip.overrides:
// "host:limit,host:limit".
func parsePerIPOverrides(raw string) (map[string]int, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	out := map[string]int{}
	for _, e := range strings.Split(raw, ",") {
		i := strings.LastIndexByte(e, ':')
		var n int
		if i <= 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides: %q must be host:limit", e)
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(e[i+1:]), "%d", &n); err != nil || n < 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides: %q must be host:limit with a limit >= 0", e)
		}
		out[strings.TrimSpace(e[:i])] = n
	}
	return out, nil
}

// wireScramStore gives SASL listeners with a SCRAM mechanism the broker's
// credential store.
func (s *Server) wireScramStore() error {
	if s.cfg.ScramStore == nil {
		// Credentials live in the metadata log (fjord user set,
		// AlterUserScramCredentials): read the current image at each
		// authentication.
		s.cfg.ScramStore = s.ScramStore()
	}
	for _, sec := range s.cfg.ListenerSecurity {
		if sec.SASL == nil || sec.SASL.Scram != nil {
			continue
		}
		for _, m := range sec.SASL.Mechanisms {
			if strings.HasPrefix(m, "SCRAM-") && s.cfg.ScramStore == nil {
				return fmt.Errorf("listener %s enables %s but the broker has no SCRAM credential store", sec.Listener, m)
			}
		}
		sec.SASL.Scram = s.cfg.ScramStore
	}
	return nil
}

// NumConnections is the number of open client connections.
func (s *Server) NumConnections() int {
	if s.proto == nil {
		return 0
	}
	return s.proto.NumConnections()
}

// interBrokerDialer is how this broker connects to the others' listener
// named by inter.broker.listener.name (or security.inter.broker.protocol):
// the listener's truststore (and keystore, for ssl.client.auth), and for
// SASL sasl.mechanism.inter.broker.protocol with the username and
// password of the listener's JAAS line, as Kafka takes them
// (listener.name.<l>.<mechanism>.sasl.jaas.config). nil for PLAINTEXT.
func interBrokerDialer(props map[string]string, b *config.Broker) (*wire.Dialer, error) {
	name := b.InterBrokerListenerName
	if name == "" {
		name = strings.ToUpper(strings.TrimSpace(props["security.inter.broker.protocol"]))
	}
	var l *config.Listener
	for i := range b.Listeners {
		if b.Listeners[i].Name == name {
			l = &b.Listeners[i]
		}
	}
	if l == nil {
		return nil, nil
	}
	d, _, err := listenerDialer(props, l.Name, l.SecurityProtocol, "sasl.mechanism.inter.broker.protocol", "inter-broker listener")
	return d, err
}

// controllerDialer is how this node connects to the controller listener
// (the first of controller.listener.names): a broker to the active
// controller, a controller to its raft peers. A broker-only node does not
// bind that listener, so its protocol comes from
// listener.security.protocol.map, as in Kafka; the SASL mechanism is
// sasl.mechanism.controller.protocol.
func controllerDialer(props map[string]string, b *config.Broker) (d *wire.Dialer, saslUser string, err error) {
	if len(b.ControllerListenerNames) == 0 {
		return nil, "", nil
	}
	name := b.ControllerListenerNames[0]
	return listenerDialer(props, name, controllerProtocol(b), "sasl.mechanism.controller.protocol", "controller listener")
}

// controllerProtocol is the controller listener's security protocol:
// listener.security.protocol.map's, else the name's own if it is one,
// else PLAINTEXT.
func controllerProtocol(b *config.Broker) string {
	name := b.ControllerListenerNames[0]
	proto := b.ListenerSecurityProtocolMap[name]
	for _, l := range b.Listeners {
		if l.Name == name && l.SecurityProtocol != "" {
			proto = l.SecurityProtocol
		}
	}
	if proto == "" && slices.Contains([]string{"SSL", "SASL_PLAINTEXT", "SASL_SSL"}, name) {
		proto = name
	}
	if proto == "" {
		proto = "PLAINTEXT"
	}
	return proto
}

// listenerDialer dials a listener with the given security protocol, with
// the listener's ssl.* keys and, for SASL, the mechanism mechKey names
// and the username and password of that mechanism's JAAS line (the
// username is returned). nil for PLAINTEXT. what names the listener's
// role in errors.
func listenerDialer(props map[string]string, name, proto, mechKey, what string) (*wire.Dialer, string, error) {
	if proto == "" || proto == "PLAINTEXT" {
		return nil, "", nil
	}
	p := newListenerProps(props, name)
	d := &wire.Dialer{}
	var user string
	if proto == "SSL" || proto == "SASL_SSL" {
		get := func(key string) string {
			if key == "ssl.endpoint.identification.algorithm" {
				return p.withDefault(key, "https")
			}
			return p.get(key)
		}
		cfg, err := protocol.ClientTLSConfig(get, "")
		if err != nil {
			return nil, "", fmt.Errorf("%s %s: %w", what, name, err)
		}
		d.TLS = cfg
	}
	if strings.HasPrefix(proto, "SASL_") {
		mech := strings.ToUpper(p.withDefault(mechKey, "GSSAPI"))
		raw := p.get(strings.ToLower(mech) + ".sasl.jaas.config")
		if raw == "" {
			raw = p.get("sasl.jaas.config")
		}
		if raw == "" {
			return nil, "", fmt.Errorf("%s %s uses %s: set listener.name.%s.%s.sasl.jaas.config with username and password",
				what, name, mech, strings.ToLower(name), strings.ToLower(mech))
		}
		j, err := protocol.ParseJAAS(raw)
		if err != nil {
			return nil, "", err
		}
		var pass string
		user, pass = j.Options["username"], j.Options["password"]
		if user == "" {
			return nil, "", fmt.Errorf("%s %s: the %s JAAS config needs username=\"...\" password=\"...\" for this node's own connections", what, name, mech)
		}
		switch mech {
		case "PLAIN":
			d.SASL = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			d.SASL = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			d.SASL = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		default:
			return nil, "", fmt.Errorf("%s=%s is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mechKey, mech)
		}
	}
	return d, user, nil
}

// endpoint is where clients of listener reach broker b: the broker's
// advertised listener of that name, as Kafka answers Metadata,
// FindCoordinator and DescribeCluster for the listener a request came in
// on. listener is "" for a broker with one client listener, and a broker
// registered without listeners (older metadata) has only Host/Port; both
// answer Host/Port. ok is false when b does not advertise the listener
// (Kafka leaves such a broker out).
func endpoint(b *metadata.Broker, listener string) (host string, port int32, ok bool) {
	if listener == "" || len(b.Listeners) == 0 {
		return b.Host, b.Port, true
	}
	for _, l := range b.Listeners {
		if strings.EqualFold(l.Name, listener) {
			return l.Host, l.Port, true
		}
	}
	return "", 0, false
}

// boundListeners are a single node's advertised client listeners with
// each unset host or port taken from the socket that listener is bound
// to (advertised listeners default to the client listeners, in the order
// they are bound), so clients of every listener are told that listener's
// address. nil when the node has one listener: Host/Port says it all.
func (s *Server) boundListeners(host string, port int32) []metadata.Listener {
	ls := s.cfg.Cluster.Listeners
	if len(ls) < 2 {
		return nil
	}
	bound := append([]net.Listener{s.ln}, s.extraLns...)
	out := make([]metadata.Listener, 0, len(ls))
	for i, l := range ls {
		h, p := l.Host, l.Port
		if (h == "" || h == "0.0.0.0" || h == "::" || p == 0) && i < len(bound) && bound[i] != nil {
			bh, bp, _ := net.SplitHostPort(bound[i].Addr().String())
			if h == "" || h == "0.0.0.0" || h == "::" {
				h = bh
			}
			if p == 0 {
				n, _ := strconv.Atoi(bp)
				p = int32(n)
			}
		}
		if h == "" {
			h = host
		}
		if p == 0 {
			p = port
		}
		out = append(out, metadata.Listener{Name: l.Name, Host: h, Port: p})
	}
	return out
}

// listenerSecurity is the security of the i-th client listener (0 is
// ListenAddr, then ExtraListenAddrs), by its name: two listeners may
// share an address string (port 0 in tests), never a name.
func (c *Config) listenerSecurity(i int) *protocol.Security {
	if i >= len(c.ListenerNames) {
		return nil
	}
	return c.ListenerSecurity[c.ListenerNames[i]]
}
