package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/configprovider"
	"github.com/fjordhq/fjord/internal/clientsec"
)

// DefaultBootstrap is where every command connects when neither
// --bootstrap-server nor FJORD_BOOTSTRAP says otherwise: the address
// `fjord dev` listens on.
const DefaultBootstrap = "127.0.0.1:9092"

// BootstrapEnv names the environment variable that replaces
// DefaultBootstrap, so a shell can point every command at one cluster.
const BootstrapEnv = "FJORD_BOOTSTRAP"

// ClientOptions are the connection flags every command shares.
type ClientOptions struct {
	// Bootstrap is a comma-separated host:port list.
	Bootstrap string
	// CommandConfig is a Java properties file of client settings, as
	// Kafka's tools take with --command-config: client.id and the
	// security settings (security.protocol, ssl.*, sasl.mechanism,
	// sasl.jaas.config — see internal/clientsec); other keys are
	// reported and ignored.
	CommandConfig string
	// Timeout bounds connecting and each admin request.
	Timeout time.Duration
}

// AddFlags registers --bootstrap-server/-b, --command-config and --timeout.
// The bootstrap default is read from FJORD_BOOTSTRAP when the flags are
// registered, so help text shows the address that will really be used.
func (o *ClientOptions) AddFlags(fs *pflag.FlagSet) {
	def := os.Getenv(BootstrapEnv)
	if def == "" {
		def = DefaultBootstrap
	}
	fs.StringVarP(&o.Bootstrap, "bootstrap-server", "b", def,
		"comma-separated host:port list of brokers (env "+BootstrapEnv+")")
	fs.StringVar(&o.CommandConfig, "command-config", "",
		"client properties file as Kafka's tools take: client.id, security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second,
		"how long to wait for the cluster to answer")
}

// seeds splits the bootstrap list, dropping blanks so "a, b," works.
func (o *ClientOptions) seeds() ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(o.Bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--bootstrap-server is empty: give host:port of a broker, e.g. " + DefaultBootstrap)
	}
	return out, nil
}

func (o *ClientOptions) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 30 * time.Second
	}
	return o.Timeout
}

// clientOpts turns the shared flags into kgo options.
func (o *ClientOptions) clientOpts() ([]kgo.Opt, error) {
	seeds, err := o.seeds()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("fjord-cli"),
		kgo.DialTimeout(min(o.timeout(), 10*time.Second)),
		kgo.RetryTimeout(o.timeout()),
		kgo.WithLogger(slogLogger{slog.Default()}),
	}
	if o.CommandConfig != "" {
		props, err := readPropertiesFile(o.CommandConfig)
		if err != nil {
			return nil, err
		}
		// Kafka clients resolve config variables in their properties
		// (KIP-421): config.providers=file with ${file:/path:key} keeps
		// the password out of client.properties.
		providers, err := configprovider.FromProps(props)
		if err != nil {
			return nil, fmt.Errorf("--command-config %s: %w", o.CommandConfig, err)
		}
		if props, err = providers.Resolve(props); err != nil {
			return nil, fmt.Errorf("--command-config %s: %w", o.CommandConfig, err)
		}
		sec, problems := clientsec.Options(props)
		if len(problems) > 0 {
			return nil, fmt.Errorf("--command-config %s: %s", o.CommandConfig, strings.Join(problems, "; "))
		}
		opts = append(opts, sec...)
		for k, v := range props {
			switch {
			case k == "client.id":
				opts = append(opts, kgo.ClientID(v))
			case k == "bootstrap.servers":
				// Kafka's tools let --bootstrap-server win too.
			case clientsec.Keys[k], k == configprovider.ProvidersKey, strings.HasPrefix(k, configprovider.ProvidersKey+"."):
			default:
				slog.Warn("command-config: property not supported yet; ignored", "file", o.CommandConfig, "key", k)
			}
		}
	}
	return opts, nil
}

// Conn is a connected client: kgo for records, kadm for admin requests.
type Conn struct {
	Client *kgo.Client
	Admin  *kadm.Client
	// Bootstrap is the seed list as given, for messages.
	Bootstrap string
}

// Close releases the connection.
func (c *Conn) Close() { c.Client.Close() }

// Connect builds a client from the shared flags plus extra (producer or
// consumer) options and checks that a broker answers within the timeout, so
// that a wrong address fails fast with advice instead of hanging in retries.
func (o *ClientOptions) Connect(ctx context.Context, extra ...kgo.Opt) (*Conn, error) {
	opts, err := o.clientOpts()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("client options: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{Bootstrap: o.Bootstrap, Err: err}
	}
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(min(o.timeout(), time.Hour) / time.Millisecond))
	return &Conn{Client: cl, Admin: adm, Bootstrap: o.Bootstrap}, nil
}

// UnreachableError says no seed broker answered.
type UnreachableError struct {
	Bootstrap string
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s: is `fjord dev` running, or should --bootstrap-server point elsewhere? (%v)",
		e.Bootstrap, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// slogLogger routes franz-go's client logs into log/slog, so
// `fjord --log-level debug ...` shows what the client does (joins,
// fetches, retries) without a second logging flag.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case s.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelDebug
	case s.l.Enabled(ctx, slog.LevelInfo):
		// kgo's info level narrates every connection; keep it for debug.
		return kgo.LogLevelWarn
	case s.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	}
	return kgo.LogLevelError
}

func (s slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lvl := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lvl = slog.LevelError
	case kgo.LogLevelWarn:
		lvl = slog.LevelWarn
	case kgo.LogLevelInfo:
		lvl = slog.LevelInfo
	}
	s.l.Log(context.Background(), lvl, "kafka client: "+msg, keyvals...)
}
