package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/fjordhq/fjord/connectors/s3/storage"

	"github.com/fjordhq/fjord/internal/bench/s3records"
)

// verifyObject reads back partition 0's first file and checks it holds
// flush.size records, the first of them record 1 (partition 0, offset 0)
// with every field as produced. It returns a line for the report.
func verifyObject(ctx context.Context, st *storage.Store, format string, c bucketContents, cfg *S3BenchConfig) (string, error) {
	prefix := cfg.expectedKeyPrefixes()[0]
	var key string
	for k := range c.sizes {
		if strings.HasPrefix(k, prefix) {
			key = k
		}
	}
	if key == "" {
		return "", fmt.Errorf("no object %s*", prefix)
	}
	b, err := st.ReadAll(ctx, key)
	if err != nil {
		return "", err
	}
	switch format {
	case S3FormatJSON:
		err = checkJSONObject(b, cfg.FlushSize)
	case S3FormatParquet:
		err = checkParquetObject(b, cfg.FlushSize)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return fmt.Sprintf("%s: %s holds %d records, the first one equal to the produced record 1", format, key, cfg.FlushSize), nil
}

// checkJSONObject: one JSON value per line (JsonFormat), n lines, the
// first the produced payload of record 1 (compared as decoded JSON: the
// sink may format numbers its own way).
func checkJSONObject(b []byte, n int) error {
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		return fmt.Errorf("%d lines, want %d", len(lines), n)
	}
	var got, want map[string]any
	if err := json.Unmarshal(lines[0], &got); err != nil {
		return fmt.Errorf("first line %.200q: %w", lines[0], err)
	}
	if err := json.Unmarshal(s3records.AppendPayload(nil, 1), &want); err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("first line %s, produced %s", lines[0], s3records.AppendPayload(nil, 1))
	}
	return nil
}

// checkParquetObject: n rows, the schema's columns named as the value's
// fields, the first row's id 1 and created_at record 1's.
func checkParquetObject(b []byte, n int) error {
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	if f.NumRows() != int64(n) {
		return fmt.Errorf("%d rows, want %d", f.NumRows(), n)
	}
	var names []string
	for _, fd := range f.Schema().Fields() {
		names = append(names, fd.Name())
	}
	if !slices.Equal(names, s3records.Fields) {
		return fmt.Errorf("columns %v, want %v", names, s3records.Fields)
	}
	if len(f.RowGroups()) == 0 {
		return fmt.Errorf("no row group")
	}
	rows := f.RowGroups()[0].Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 1)
	if k, err := rows.ReadRows(buf); k != 1 {
		return fmt.Errorf("read the first row: %v", err)
	}
	for _, check := range []struct {
		col  string
		want int64
	}{{"id", 1}, {"created_at", s3records.CreatedBase + 37}} {
		leaf, ok := f.Schema().Lookup(check.col)
		if !ok {
			return fmt.Errorf("no column %s", check.col)
		}
		var got []int64
		for _, v := range buf[0] {
			if v.Column() == leaf.ColumnIndex {
				got = append(got, v.Int64())
			}
		}
		if len(got) != 1 || got[0] != check.want {
			return fmt.Errorf("first row's %s = %v, want %d", check.col, got, check.want)
		}
	}
	return nil
}
