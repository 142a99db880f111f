package configprovider

import (
	"strings"
	"testing"
)

// Resolve must not panic on any value, must leave values without a
// variable as they are, and must not put a provider's value into an
// error.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"${env:FUZZ_CP}", "a${x:y}b", "${:}", "${a:b:c:d}", "${", "}${env:FUZZ_CP}${", "${topic}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ps := Providers{"env": fixed{"FUZZ_CP": "FUZZ-SECRET"}}
		out, err := ps.Resolve(map[string]string{"k": v})
		if err != nil {
			if strings.Contains(err.Error(), "FUZZ-SECRET") {
				t.Fatalf("error shows a value: %v", err)
			}
			return
		}
		if !HasVariables(v) && out["k"] != v {
			t.Fatalf("%q became %q without a variable", v, out["k"])
		}
	})
}

// fixed is a provider with fixed values and no path.
type fixed map[string]string

func (f fixed) Get(path string, keys []string) (map[string]string, error) { return pick(f, keys), nil }
