package admin

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	connectapi "github.com/fjordhq/fjord/api/connect"
)

// The admin API's operations are described in OpenAPI fragments (each a
// small OpenAPI 3 document with paths, components.schemas and tags), one
// per part of the API, merged with Kafka Connect's document into the one
// /openapi.json every node serves.
//
//go:embed openapi/*.json
var fragments embed.FS

// OpenAPI returns the merged OpenAPI document: Kafka Connect's REST API
// and the admin API.
func OpenAPI() []byte {
	docs := [][]byte{connectapi.OpenAPI()}
	names, _ := fs.Glob(fragments, "openapi/*.json")
	sort.Strings(names)
	for _, n := range names {
		b, err := fragments.ReadFile(n)
		if err != nil {
			panic(err)
		}
		docs = append(docs, b)
	}
	out, err := MergeOpenAPI(docs...)
	if err != nil {
		panic(err) // the embedded fragments are tested to merge
	}
	return out
}

// MergeOpenAPI merges OpenAPI 3 documents: the first gives openapi and
// servers; paths, components.schemas, components.parameters,
// components.responses and tags are united. A path or schema defined
// twice is an error, so one part cannot silently replace another's.
func MergeOpenAPI(docs ...[]byte) ([]byte, error) {
	out := map[string]any{}
	paths := map[string]any{}
	components := map[string]map[string]any{}
	var tags []any
	seenTag := map[string]bool{}
	for i, raw := range docs {
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("OpenAPI document %d: %w", i, err)
		}
		if i == 0 {
			for k, v := range d {
				out[k] = v
			}
		}
		if p, ok := d["paths"].(map[string]any); ok {
			for k, v := range p {
				if _, dup := paths[k]; dup {
					return nil, fmt.Errorf("OpenAPI document %d: path %s is already defined", i, k)
				}
				paths[k] = v
			}
		}
		if c, ok := d["components"].(map[string]any); ok {
			for kind, m := range c {
				mm, ok := m.(map[string]any)
				if !ok {
					continue
				}
				if components[kind] == nil {
					components[kind] = map[string]any{}
				}
				for k, v := range mm {
					if _, dup := components[kind][k]; dup {
						return nil, fmt.Errorf("OpenAPI document %d: components.%s.%s is already defined", i, kind, k)
					}
					components[kind][k] = v
				}
			}
		}
		if t, ok := d["tags"].([]any); ok {
			for _, tag := range t {
				name, _ := tag.(map[string]any)["name"].(string)
				if !seenTag[name] {
					seenTag[name] = true
					tags = append(tags, tag)
				}
			}
		}
	}
	out["info"] = map[string]any{
		"title":   "Fjord HTTP API",
		"version": "1",
		"description": "Kafka Connect's REST API (as of Kafka 4.4) and Fjord's admin API under /api/v1 (cluster, brokers, topics, " +
			"messages, consumer groups, schemas, pipelines, mirror, history). Errors are {\"error_code\": <HTTP status>, \"message\": ...}. " +
			"The web console at /ui uses only these operations.",
	}
	out["paths"] = paths
	comps := map[string]any{}
	for k, v := range components {
		comps[k] = v
	}
	out["components"] = comps
	out["tags"] = tags
	return json.MarshalIndent(out, "", "  ")
}
