package json

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// JsonConverter's keys as Kafka Connect 4.4 describes them in a validate
// answer (captured in connect/runtime/testdata/kafkaref): every key.converter.*
// definition has its twin in our ConfigDef, schema.content included.
func TestConfigDefMatchesKafka(t *testing.T) {
	data, err := os.ReadFile("../../connect/runtime/testdata/kafkaref/validate/bad_converter.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Response struct {
			Configs []struct {
				Definition map[string]any `json:"definition"`
			} `json:"configs"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	const prefix = "key.converter."
	n := 0
	for _, c := range g.Response.Configs {
		d := c.Definition
		name, _ := d["name"].(string)
		if len(name) <= len(prefix) || name[:len(prefix)] != prefix || name == prefix+"plugin.version" {
			continue
		}
		n++
		k := configDef.Key(name[len(prefix):])
		if k == nil {
			t.Errorf("%s: not defined", name)
			continue
		}
		var def any
		if k.Default != nil && k.Default != connect.NoDefault {
			def = fmt.Sprint(k.Default)
		}
		ours := map[string]any{"type": k.Type.String(), "default_value": def, "importance": k.Importance.String(),
			"documentation": k.Doc, "group": k.Group, "order_in_group": float64(k.OrderInGroup), "width": k.Width.String(),
			"display_name": k.DisplayName}
		if k.Group == "" { // Kafka's null group, order -1
			ours["group"], ours["order_in_group"] = nil, float64(-1)
		}
		for f, v := range ours {
			if d[f] != v {
				t.Errorf("%s %s: Kafka %#v, ours %#v", name, f, d[f], v)
			}
		}
	}
	if n != len(configDef.Keys()) {
		t.Errorf("Kafka lists %d JsonConverter keys, we define %d", n, len(configDef.Keys()))
	}
}

// schema.content through the public API: a value converter configured
// with it reads bare JSON payloads (a sink reading a topic written by a
// plain JSON producer) and still writes envelopes.
func TestSchemaContent(t *testing.T) {
	c := New()
	err := c.Configure(map[string]string{"schema.content": `{"type":"struct","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string","optional":true}]}`}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := c.ToConnectData("t", nil, []byte(`{"id":3,"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := v.(*connect.Struct)
	if !ok {
		t.Fatalf("decoded %v %v", s, v)
	}
	id, _ := st.Get("id")
	name, _ := st.Get("name")
	if s == nil || s.Type != connect.StructType || id != int64(3) || name != "x" {
		t.Fatalf("decoded %v %v", s, v)
	}
	out, err := c.FromConnectData("t", nil, s, st)
	if err != nil || string(out) != `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":false},"payload":{"id":3,"name":"x"}}` {
		t.Fatalf("encoded %s %v", out, err)
	}
	// Reconfiguring without it brings the envelope back.
	if err := c.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ToConnectData("t", nil, []byte(`{"id":3}`)); err == nil {
		t.Fatal("bare payload accepted without schema.content")
	}
	if err := New().Configure(map[string]string{"schema.content": `{"type":`}, false); err == nil {
		t.Fatal("bad schema.content accepted")
	}
}
