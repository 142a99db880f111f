package plugins

import (
	"strings"
	"testing"
)

func TestOneClassSeveralKinds(t *testing.T) {
	type both struct{ name string }
	cls := "test.kinds.BothConverter"
	Register(Plugin{Class: cls, Aliases: []string{"TestBoth"}, Kind: Converter, New: func() any { return both{"c"} }})
	Register(Plugin{Class: cls, Aliases: []string{"TestBoth"}, Kind: HeaderConverter, New: func() any { return both{"h"} }})
	for _, n := range []string{cls, "TestBoth"} {
		p, err := LookupKind(n, HeaderConverter)
		if err != nil || p.Kind != HeaderConverter {
			t.Fatalf("LookupKind(%s, header): %v %v", n, p, err)
		}
		if p, err := LookupKind(n, Converter); err != nil || p.Kind != Converter {
			t.Fatalf("LookupKind(%s, converter): %v %v", n, p, err)
		}
		if _, err := LookupKind(n, Transformation); err == nil || !strings.Contains(err.Error(), "not a Transformation") {
			t.Fatalf("wrong kind: %v", err)
		}
	}
	n := 0
	for _, p := range List(Converter, HeaderConverter) {
		if p.Class == cls {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("List has the class %d times, want once per kind", n)
	}
	mustPanic(t, func() { Register(Plugin{Class: cls, Kind: Converter, New: func() any { return nil }}) })
	mustPanic(t, func() {
		Register(Plugin{Class: "test.kinds.Other", Aliases: []string{"TestBoth"}, Kind: Transformation, New: func() any { return nil }})
	})
}

func mustPanic(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	f()
}
