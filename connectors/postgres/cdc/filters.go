package cdc

import (
	"fmt"
	"regexp"
)

// systemSchemas are never captured (Debezium's built-in exclusions).
var systemSchemas = map[string]bool{"pg_catalog": true, "information_schema": true, "pg_toast": true, "pg_internal": true}

// filters decides which schemas, tables and columns are captured, from
// Debezium's include/exclude lists: regular expressions matched against
// the whole identifier ('<schema>', '<schema>.<table>',
// '<schema>.<table>.<column>').
type filters struct {
	schemaInc, schemaExc []*regexp.Regexp
	tableInc, tableExc   []*regexp.Regexp
	colInc, colExc       []*regexp.Regexp
}

func newFilters(schemaInc, schemaExc, tableInc, tableExc, colInc, colExc []string) (*filters, error) {
	f := &filters{}
	for _, l := range []struct {
		src []string
		dst *[]*regexp.Regexp
	}{{schemaInc, &f.schemaInc}, {schemaExc, &f.schemaExc}, {tableInc, &f.tableInc}, {tableExc, &f.tableExc}, {colInc, &f.colInc}, {colExc, &f.colExc}} {
		for _, p := range l.src {
			re, err := regexp.Compile("^(?:" + p + ")$")
			if err != nil {
				return nil, fmt.Errorf("bad regular expression %q: %w", p, err)
			}
			*l.dst = append(*l.dst, re)
		}
	}
	return f, nil
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// includeTable reports whether schema.table is captured.
func (f *filters) includeTable(schema, table string) bool {
	if systemSchemas[schema] {
		return false
	}
	if len(f.schemaInc) > 0 && !anyMatch(f.schemaInc, schema) || anyMatch(f.schemaExc, schema) {
		return false
	}
	id := schema + "." + table
	if len(f.tableInc) > 0 {
		return anyMatch(f.tableInc, id)
	}
	return !anyMatch(f.tableExc, id)
}

// includeColumn reports whether a column of a captured table is part of
// its events.
func (f *filters) includeColumn(schema, table, column string) bool {
	id := schema + "." + table + "." + column
	if len(f.colInc) > 0 {
		return anyMatch(f.colInc, id)
	}
	return !anyMatch(f.colExc, id)
}

// explicitTables reports whether the table list is an include list (the
// filtered publication mode then names exactly those tables).
func (f *filters) hasTableInclude() bool { return len(f.tableInc) > 0 || len(f.schemaInc) > 0 }
