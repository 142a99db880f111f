#!/usr/bin/env bash
# fuzz.sh [TIME] — run every Fuzz target in the module for TIME (default 30s)
# each, one after another. New crashers land in the package's
# testdata/fuzz/<Target>/ and make the normal test run fail until fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
time="${1:-30s}"
fail=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	for t in $targets; do
		echo "== $pkg $t ($time)"
		if ! go test "$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$time"; then
			echo "FAILED: $pkg $t"
			fail=1
		fi
	done
done
exit $fail
