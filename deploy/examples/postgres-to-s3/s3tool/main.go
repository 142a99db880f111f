// Command s3tool is the example's S3 client: it creates the bucket and
// reads back what the S3 sink wrote, with the connection settings taken
// from the sink's own connector JSON (store.url, s3.bucket.name, the
// credentials, format.class), so the example states them once. It uses
// Fjord's S3 storage and format packages, the same code the sink writes
// with; no AWS CLI is needed.
//
//	s3tool -config s3-sink.json mkbucket
//	s3tool -config s3-sink.json ls [prefix]
//	s3tool -config s3-sink.json count [prefix]
//	s3tool -config s3-sink.json [-fields op,after] dump [prefix]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/storage"
	jsonconv "github.com/fjordhq/fjord/converters/json"
)

func main() {
	config := flag.String("config", "", "connector JSON file: {\"name\":..., \"config\":{...}} as POSTed to /connectors, or the bare config map")
	fields := flag.String("fields", "", "dump: print only these top-level fields of each record (comma-separated)")
	timeout := flag.Duration("timeout", 30*time.Second, "give up after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: s3tool -config FILE mkbucket | ls [prefix] | count [prefix] | dump [prefix]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *config == "" || flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *config, *fields, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "s3tool:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, file, fields string, args []string) error {
	props, err := readConfig(file)
	if err != nil {
		return err
	}
	cfg, err := storage.ConfigFrom(props)
	if err != nil {
		return err
	}
	store, err := storage.New(ctx, cfg)
	if err != nil {
		return err
	}
	prefix := ""
	if len(args) > 1 {
		prefix = args[1]
	}
	switch args[0] {
	case "mkbucket":
		return store.CreateBucket(ctx)
	case "ls":
		return store.List(ctx, prefix, "", func(o storage.Object) error {
			_, err := fmt.Printf("%8d  %s\n", o.Size, o.Key)
			return err
		})
	case "count":
		n := 0
		err := eachRecord(ctx, store, props, prefix, func(string, *connect.Schema, any) error { n++; return nil })
		if err == nil {
			fmt.Println(n)
		}
		return err
	case "dump":
		return dump(ctx, store, props, prefix, fields)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// readConfig reads a connector's config from its REST API JSON.
func readConfig(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &doc); err == nil && doc.Config != nil {
		return doc.Config, nil
	}
	var flat map[string]string
	if err := json.Unmarshal(b, &flat); err != nil {
		return nil, fmt.Errorf("%s: not a connector config: %w", file, err)
	}
	return flat, nil
}

// eachRecord decodes every object under prefix, in key order, with the
// connector's format.class.
func eachRecord(ctx context.Context, store *storage.Store, props map[string]string, prefix string, fn func(key string, s *connect.Schema, v any) error) error {
	f, err := format.New(props["format.class"], props)
	if err != nil {
		return err
	}
	var keys []string
	err = store.List(ctx, prefix, "", func(o storage.Object) error {
		if strings.HasSuffix(o.Key, f.Extension()) {
			keys = append(keys, o.Key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range keys {
		b, err := store.ReadAll(ctx, key)
		if err != nil {
			return err
		}
		r, err := f.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		for {
			s, v, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if err := fn(key, s, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// dump prints each object's key, then its records as schemaless JSON,
// one a line (decimals as numbers).
func dump(ctx context.Context, store *storage.Store, props map[string]string, prefix, fields string) error {
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{"schemas.enable": "false", "decimal.format": "NUMERIC"}, false); err != nil {
		return err
	}
	var keep []string
	if fields != "" {
		keep = strings.Split(fields, ",")
	}
	last := ""
	return eachRecord(ctx, store, props, prefix, func(key string, s *connect.Schema, v any) error {
		if key != last {
			fmt.Println(key)
			last = key
		}
		if st, ok := v.(*connect.Struct); ok && keep != nil {
			s, v = project(st, keep)
		}
		b, err := conv.FromConnectData("", nil, s, v)
		if err != nil {
			return err
		}
		_, err = fmt.Printf("  %s\n", b)
		return err
	})
}

// project keeps the named fields of a struct (a Debezium envelope's op
// and after, say), in the order asked.
func project(st *connect.Struct, names []string) (*connect.Schema, any) {
	b := connect.NewStruct()
	var kept []connect.Field
	for _, n := range names {
		if f := st.Schema().Field(strings.TrimSpace(n)); f != nil {
			b.Field(f.Name, f.Schema)
			kept = append(kept, *f)
		}
	}
	s := b.Build()
	out := connect.NewStructValue(s)
	for _, f := range kept {
		out.MustPut(f.Name, st.GetField(&f))
	}
	return s, out
}
