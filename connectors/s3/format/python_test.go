package format

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// readerScript reads Parquet files with pyarrow and Avro files with
// fastavro (the readers analytics stacks use) and prints their rows as
// JSON: dates as days, times of day and timestamps as milliseconds,
// decimals as their text, bytes in hex, maps as objects.
const readerScript = `
import datetime, decimal, json, sys
import pyarrow.parquet as pq
import fastavro

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {k: norm(x) for k, x in v}
        return [norm(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, (int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, datetime.datetime):
        return (v - EPOCH) // datetime.timedelta(milliseconds=1)
    if isinstance(v, datetime.date):
        return (v - datetime.date(1970, 1, 1)).days
    if isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    raise TypeError(type(v))

out = {}
for path in sys.argv[1:]:
    if path.endswith('.parquet'):
        rows = pq.read_table(path).to_pylist()
    else:
        with open(path, 'rb') as f:
            rows = list(fastavro.reader(f))
    out[path.rsplit('/', 1)[-1]] = [norm(r) for r in rows]
json.dump(out, sys.stdout)
`

// pythonReaders reports whether python3 with pyarrow and fastavro (and
// cramjam, fastavro's snappy) is here; they are PyPI packages, not
// Debian ones on this machine's Debian (bookworm).
func pythonReaders(t *testing.T) {
	err := exec.Command("python3", "-c", "import pyarrow, fastavro, cramjam").Run()
	if err == nil {
		return
	}
	msg := "python3 with pyarrow, fastavro and cramjam is needed (pip install pyarrow fastavro cramjam): " + err.Error()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// expectedJSON renders a Connect value as readerScript prints it.
func expectedJSON(v any) any {
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int8, int16, int32, int64:
		return json.Number(fmt.Sprint(x))
	case float32:
		b, _ := json.Marshal(float64(x))
		return json.Number(b)
	case float64:
		b, _ := json.Marshal(x)
		return json.Number(b)
	case []byte:
		return hex.EncodeToString(x)
	case connect.Decimal:
		return x.String()
	case *connect.Struct:
		out := map[string]any{}
		for _, f := range x.Schema().Fields {
			fv, _ := x.Get(f.Name)
			switch f.Schema.Name {
			case connect.DateName:
				if t, ok := fv.(time.Time); ok {
					days, _ := connect.DateToDays(t)
					fv = days
				}
			case connect.TimeName:
				if t, ok := fv.(time.Time); ok {
					ms, _ := connect.TimeToMillis(t)
					fv = ms
				}
			case connect.TimestampName:
				if t, ok := fv.(time.Time); ok {
					fv = t.UnixMilli()
				}
			}
			out[f.Name] = expectedJSON(fv)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expectedJSON(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = expectedJSON(e)
		}
		return out
	case map[any]any:
		entries, _ := sortedEntries(x)
		out := []any{}
		for _, e := range entries {
			out = append(out, map[string]any{"key": expectedJSON(e[0]), "value": expectedJSON(e[1])})
		}
		return out
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

func TestReadByPyarrowAndFastavro(t *testing.T) {
	pythonReaders(t)
	dir := t.TempDir()
	type file struct {
		name    string
		class   string
		props   map[string]string
		schema  *connect.Schema
		records []*connect.Struct
	}
	files := []file{
		{"rich.snappy.parquet", "ParquetFormat", nil, richSchema, richRecords()},
		{"rich.zstd.parquet", "ParquetFormat", map[string]string{ParquetCodecConfig: "zstd"}, richSchema, richRecords()},
		{"rich.gz.parquet", "ParquetFormat", map[string]string{ParquetCodecConfig: "gzip"}, richSchema, richRecords()},
		{"lists.parquet", "ParquetFormat", map[string]string{ParquetCodecConfig: "none"}, listsSchema, listsRecords()},
		{"rich.null.avro", "AvroFormat", nil, richSchema, richRecords()},
		{"rich.deflate.avro", "AvroFormat", map[string]string{AvroCodecConfig: "deflate"}, richSchema, richRecords()},
		{"rich.snappy.avro", "AvroFormat", map[string]string{AvroCodecConfig: "snappy"}, richSchema, richRecords()},
		{"lists.avro", "AvroFormat", nil, listsSchema, listsRecords()},
	}
	args := []string{"-c", readerScript}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, writeAll(t, mustNew(t, f.class, f.props), f.schema, structsAsAny(f.records)...), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("python3", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	var got map[string][]any
	if err := d.Decode(&got); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rows := got[f.name]
		if len(rows) != len(f.records) {
			t.Errorf("%s: %d rows", f.name, len(rows))
			continue
		}
		for i, r := range f.records {
			want := expectedJSON(r)
			// Round-trip through JSON so both sides have the same types.
			wb, _ := json.Marshal(want)
			gb, _ := json.Marshal(rows[i])
			if !bytes.Equal(canonical(t, wb), canonical(t, gb)) {
				t.Errorf("%s row %d:\n got %s\nwant %s", f.name, i, gb, wb)
			}
		}
	}
}

// canonical re-encodes JSON with sorted keys and numbers as written.
func canonical(t *testing.T, b []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	writeCanonical(&sb, v)
	return []byte(sb.String())
}

func writeCanonical(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			// pyarrow reads an empty map as an empty list of pairs,
			// which readerScript cannot tell from an empty array.
			sb.WriteString("[]")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(sb, "%q:", k)
			writeCanonical(sb, x[k])
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeCanonical(sb, e)
		}
		sb.WriteByte(']')
	default:
		b, _ := json.Marshal(x)
		sb.Write(b)
	}
}
