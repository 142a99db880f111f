// Package transformtest is the conformance suite every Fjord
// transformation and predicate runs (Run, RunPredicate), and the JSON
// record codec the golden tests share with the Java generator in
// transforms/testdata/golden.
//
// Run checks what a transformation owes the runtime whatever it does:
//   - its ConfigDef agrees with Configure: the test's config uses only
//     declared keys, every required key is needed, every optional key
//     accepts its declared default spelled out;
//   - a nil record passes through as nil;
//   - schema'd, schemaless, primitive, source and tombstone records (and
//     the case's own records) come back transformed, dropped or with an
//     error, never a panic;
//   - the input record — header list, maps, lists, structs — is never
//     modified;
//   - outputs are valid for their schemas (key, value, headers);
//   - the same input schema yields the same output schema instance;
//   - concurrent use is safe (run with -race).
//
// RunPredicate checks the same of predicates, with Test(nil) false.
package transformtest
