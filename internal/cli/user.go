package cli

// `fjord user`: SCRAM credentials stored by the brokers (Kafka's
// kafka-configs --entity-type users --add-config 'SCRAM-SHA-256=[...]'),
// through DescribeUserScramCredentials and AlterUserScramCredentials. The
// password is salted here (PBKDF2, as Kafka's clients do); only the salt
// and salted password travel to the broker.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's default iterations for a new SCRAM credential (kafka-configs).
const DefaultScramIterations = 4096

// ParseScramMechanism parses "SCRAM-SHA-256" or "SCRAM-SHA-512" (any case).
func ParseScramMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, fmt.Errorf("--mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", s)
}

func scramName(m kadm.ScramMechanism) string {
	switch m {
	case kadm.ScramSha256:
		return "SCRAM-SHA-256"
	case kadm.ScramSha512:
		return "SCRAM-SHA-512"
	}
	return "UNKNOWN"
}

// UserSetOptions are `fjord user set`'s flags.
type UserSetOptions struct {
	Mechanism  string
	Password   string
	Iterations int32
}

// userErr says what to do next for the errors people hit on credentials.
func userErr(user string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnacceptableCredential):
		return fmt.Errorf("user %s: credential refused (iterations must be %d..16384, the name not empty): %w", user, DefaultScramIterations, err)
	case errors.Is(err, kerr.ResourceNotFound):
		return fmt.Errorf("user %s has no such credential: see `fjord user describe`: %w", user, err)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("user %s: not authorized: credentials need ALTER (DESCRIBE to list) on the cluster: %w", user, err)
	}
	return fmt.Errorf("user %s: %w", user, err)
}

// UserSet creates or replaces a user's SCRAM credential for one mechanism.
func UserSet(ctx context.Context, co *ClientOptions, user string, o UserSetOptions, p *Printer) error {
	mech, err := ParseScramMechanism(o.Mechanism)
	if err != nil {
		return err
	}
	if o.Password == "" {
		return errors.New("no password: pass --password, or --password-stdin to read it from standard input")
	}
	if o.Iterations == 0 {
		o.Iterations = DefaultScramIterations
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.Admin.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: o.Iterations, Password: o.Password}})
	if err != nil {
		return userErr(user, err)
	}
	if r, ok := res[user]; ok && r.Err != nil {
		return userErr(user, brokerErr(r.Err, r.ErrMessage))
	}
	if p.JSONMode() {
		return p.JSON(map[string]any{"user": user, "mechanism": scramName(mech), "iterations": o.Iterations})
	}
	p.Linef("Set %s credential of user %s (%d iterations).", scramName(mech), user, o.Iterations)
	return nil
}

type userJSON struct {
	User        string           `json:"user"`
	Credentials []credentialJSON `json:"credentials"`
}

type credentialJSON struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

// UserDescribe lists users' SCRAM mechanisms and iterations (every user
// with a credential if none are named). Keys are never shown: the
// brokers do not return them.
func UserDescribe(ctx context.Context, co *ClientOptions, users []string, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	described, err := c.Admin.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return fmt.Errorf("describe users: %w", err)
	}
	out := []userJSON{}
	var errs []error
	for _, d := range described.Sorted() {
		if d.Err != nil {
			errs = append(errs, userErr(d.User, brokerErr(d.Err, d.ErrMessage)))
			continue
		}
		u := userJSON{User: d.User, Credentials: []credentialJSON{}}
		infos := slices.Clone(d.CredInfos)
		slices.SortFunc(infos, func(a, b kadm.CredInfo) int { return int(a.Mechanism) - int(b.Mechanism) })
		for _, ci := range infos {
			u.Credentials = append(u.Credentials, credentialJSON{scramName(ci.Mechanism), ci.Iterations})
		}
		out = append(out, u)
	}
	if p.JSONMode() {
		if err := p.JSON(out); err != nil {
			return err
		}
	} else {
		var rows [][]string
		for _, u := range out {
			for _, ci := range u.Credentials {
				rows = append(rows, []string{u.User, ci.Mechanism, strconv.Itoa(int(ci.Iterations))})
			}
		}
		if err := p.Table([]string{"USER", "MECHANISM", "ITERATIONS"}, rows); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// UserDelete removes a user's credential for mechanism, or every
// credential the user has when mechanism is "".
func UserDelete(ctx context.Context, co *ClientOptions, user, mechanism string, p *Printer) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var mechs []kadm.ScramMechanism
	if mechanism != "" {
		m, err := ParseScramMechanism(mechanism)
		if err != nil {
			return err
		}
		mechs = []kadm.ScramMechanism{m}
	} else {
		described, err := c.Admin.DescribeUserSCRAMs(ctx, user)
		if err != nil {
			return fmt.Errorf("describe user %s: %w", user, err)
		}
		d := described[user]
		if d.Err != nil {
			return userErr(user, brokerErr(d.Err, d.ErrMessage))
		}
		for _, ci := range d.CredInfos {
			mechs = append(mechs, ci.Mechanism)
		}
	}
	// Kafka refuses a user named twice in one request, so one request
	// per mechanism.
	var names []string
	for _, m := range mechs {
		res, err := c.Admin.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: m}}, nil)
		if err != nil {
			return userErr(user, err)
		}
		if r, ok := res[user]; ok && r.Err != nil {
			return userErr(user, brokerErr(r.Err, r.ErrMessage))
		}
		names = append(names, scramName(m))
	}
	if p.JSONMode() {
		return p.JSON(map[string]any{"user": user, "deleted": names})
	}
	p.Linef("Deleted %s credential(s) of user %s.", strings.Join(names, ", "), user)
	return nil
}
