// Package transformtest is the conformance suite every Fjord
// transformation and predicate runs (Run, RunPredicate), and the JSON
// record codec the golden tests share with the Java generator in
// transforms/testdata/golden.
//
// Run checks what a transformation owes the runtime whatever it does:
// its ConfigDef lists every key Configure reads (keys it does not define
// are refused or ignored, never read silently), a nil record passes
// through as nil, tombstones (schema'd and schemaless) are handled
// without panicking, schema'd and schemaless records come back either
// transformed or with an error (never a panic), and the input record —
// its header list, maps, lists and structs — is never modified.
package transformtest
