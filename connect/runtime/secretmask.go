package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/storage"
)

// minSecretLen is the shortest value masked: masking one or two
// characters would garble every message and hide nothing.
const minSecretLen = 3

// secretMask replaces secret values — what config variables resolved to,
// and PASSWORD-type values — with "[hidden]" in text that leaves the
// worker: log records, status traces, errors returned to the herder.
type secretMask struct {
	secrets []string // longest first, so a secret containing another is masked whole
}

func (m *secretMask) add(vs ...string) {
	for _, v := range vs {
		if len(v) >= minSecretLen && !slices.Contains(m.secrets, v) {
			m.secrets = append(m.secrets, v)
		}
		// A multi-line value (a PEM key) is masked line by line too, as
		// errors often quote one line of it.
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); len(line) >= 16 && line != v && !slices.Contains(m.secrets, line) {
				m.secrets = append(m.secrets, line)
			}
		}
	}
	slices.SortFunc(m.secrets, func(a, b string) int { return len(b) - len(a) })
}

func (m *secretMask) merge(o *secretMask) {
	if o != nil {
		m.add(o.secrets...)
	}
}

func (m *secretMask) empty() bool { return m == nil || len(m.secrets) == 0 }

// String masks s.
func (m *secretMask) String(s string) string {
	if m.empty() {
		return s
	}
	for _, v := range m.secrets {
		s = strings.ReplaceAll(s, v, "[hidden]")
	}
	return s
}

// Err masks an error's message and trace; errors.As and errors.Is still
// see the original chain (herders look for their own error types).
func (m *secretMask) Err(err error) error {
	if err == nil || m.empty() {
		return err
	}
	return &maskedError{err: err, m: m}
}

type maskedError struct {
	err error
	m   *secretMask
}

func (e *maskedError) Error() string { return e.m.String(e.err.Error()) }
func (e *maskedError) Unwrap() error { return e.err }

// Trace is the wrapped error's status trace, masked (herder.StatusTrace
// finds this Trace first).
func (e *maskedError) Trace() string {
	var t interface{ Trace() string }
	if errors.As(e.err, &t) {
		return e.m.String(t.Trace())
	}
	return e.m.String(ErrorTrace(e.err))
}

// Listener masks the errors reported to a status listener.
func (m *secretMask) Listener(l herder.DistributedStatusListener) herder.DistributedStatusListener {
	if l == nil || m.empty() {
		return l
	}
	return maskedListener{l: l, m: m}
}

type maskedListener struct {
	l herder.DistributedStatusListener
	m *secretMask
}

func (x maskedListener) Status(connector string, task int, st storage.State, err error) {
	x.l.Status(connector, task, st, x.m.Err(err))
}

// Logger returns log with every record's message and attributes masked.
func (m *secretMask) Logger(log *slog.Logger) *slog.Logger {
	if m.empty() {
		return log
	}
	return slog.New(&maskHandler{h: log.Handler(), m: m})
}

type maskHandler struct {
	h slog.Handler
	m *secretMask
}

func (x *maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return x.h.Enabled(ctx, l) }

func (x *maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, x.m.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(x.attr(a))
		return true
	})
	return x.h.Handle(ctx, out)
}

func (x *maskHandler) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = x.attr(a)
	}
	return &maskHandler{h: x.h.WithAttrs(masked), m: x.m}
}

func (x *maskHandler) WithGroup(name string) slog.Handler {
	return &maskHandler{h: x.h.WithGroup(name), m: x.m}
}

// attr masks an attribute: strings, errors and anything else printed
// with %v are rendered and masked; groups recursively.
func (x *maskHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, x.m.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = x.attr(ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if m := x.m.String(s); m != s {
			return slog.String(a.Key, m)
		}
	}
	return a
}
