package datagen

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// FuzzParseSpec checks that any spec either fails to parse with an error
// or generates values that match its schema, for a few sequence numbers.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"id:int64:seq,name:string:8..16,amount:float64:0..1000,ok:boolean",
		"string:User_{1..9}", "a:int8:-1|2|3", "t:timestamp:0..10", "b:bytes:0..3", "x:float32:1.5", "int64",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sp, err := parseSpec(text, "")
		if err != nil {
			return
		}
		a := &arena{}
		for _, seq := range []int64{0, 1, 1 << 40, -1} {
			r := newRNG(7, seq)
			v := sp.build(&r, seq, a)
			if err := connect.Validate(sp.schema, v); err != nil {
				t.Fatalf("%q: value %v does not match its schema: %v", text, v, err)
			}
		}
	})
}
