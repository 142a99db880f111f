package policy

import (
	"slices"
	"testing"
)

func TestProvenance(t *testing.T) {
	// A record produced on A, mirrored A→B then B→C.
	var h []byte
	if LoopsBack(h, "A") {
		t.Fatal("a record without the header never loops back")
	}
	h = AppendProvenance(h, "A")
	if string(h) != "A" {
		t.Fatalf("after A: %q", h)
	}
	h = AppendProvenance(h, "B")
	if string(h) != "A,B" {
		t.Fatalf("after B: %q", h)
	}
	for alias, want := range map[string]bool{"A": true, "B": true, "C": false, "": false, "A,B": false, "a": false} {
		if got := LoopsBack(h, alias); got != want {
			t.Errorf("LoopsBack(%q, %q) = %v", h, alias, got)
		}
	}
	if got := Provenance(h); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("Provenance = %q", got)
	}
	// Appending an alias already listed keeps the header as it is.
	if got := AppendProvenance(h, "A"); string(got) != "A,B" {
		t.Errorf("re-append A: %q", got)
	}
	// The input is never modified, even with spare capacity.
	base := make([]byte, 1, 64)
	base[0] = 'X'
	one := AppendProvenance(base, "Y")
	two := AppendProvenance(base, "Z")
	if string(one) != "X,Y" || string(two) != "X,Z" {
		t.Errorf("appends share storage: %q %q", one, two)
	}
}

func TestProvenanceEscaping(t *testing.T) {
	h := AppendProvenance(AppendProvenance(nil, "dc,1"), "50%")
	if string(h) != "dc%2C1,50%25" {
		t.Fatalf("header %q", h)
	}
	if !LoopsBack(h, "dc,1") || !LoopsBack(h, "50%") || LoopsBack(h, "dc") || LoopsBack(h, "1") {
		t.Error("LoopsBack must match whole escaped aliases")
	}
	if got := Provenance(h); !slices.Equal(got, []string{"dc,1", "50%"}) {
		t.Errorf("Provenance = %q", got)
	}
	// Spaces around entries (a hand-written header) are tolerated.
	if !LoopsBack([]byte("A, B"), "B") {
		t.Error("spaces")
	}
}

// Active-active A⇄B with identity names: each record crosses once.
func TestProvenanceActiveActive(t *testing.T) {
	type rec struct {
		cluster string
		prov    []byte
	}
	// mirror replicates r from its cluster to target if it does not loop.
	mirror := func(r rec, target string) (rec, bool) {
		if LoopsBack(r.prov, target) {
			return rec{}, false
		}
		return rec{target, AppendProvenance(r.prov, r.cluster)}, true
	}
	onA := rec{"A", nil}
	onB, ok := mirror(onA, "B")
	if !ok {
		t.Fatal("A→B must replicate a record produced on A")
	}
	if _, ok := mirror(onB, "A"); ok {
		t.Fatal("B→A must not send A's record home")
	}
	// A third cluster C in a ring A→B→C→A: C gets it, A does not.
	onC, ok := mirror(onB, "C")
	if !ok {
		t.Fatal("B→C must replicate")
	}
	if _, ok := mirror(onC, "A"); ok {
		t.Fatal("C→A must not send A's record home")
	}
}
