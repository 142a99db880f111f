package connectapi

import (
	"context"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Test plugins registered under names no real plugin uses.
type testSource struct{}

func (testSource) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "path", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "Where to read <from> & how."}).
		Define(connect.ConfigKey{Name: "ratio", Type: connect.TypeDouble, Default: 1.0, Importance: connect.Low, Doc: "A ratio.", Group: "Tuning", OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Ratio"}).
		Define(connect.ConfigKey{Name: "topics.list", Type: connect.TypeList, Default: []string{"a", "b"}, Importance: connect.Medium}).
		Define(connect.ConfigKey{Name: "secret", Type: connect.TypePassword, Default: connect.Password("x"), Importance: connect.Medium}).
		Define(connect.ConfigKey{Name: "hidden", Type: connect.TypeString, Default: nil, Internal: true})
}
func (testSource) Start(context.Context, map[string]string) error { return nil }
func (testSource) TaskConfigs(int) ([]map[string]string, error)   { return nil, nil }
func (testSource) Stop() error                                    { return nil }
func (testSource) NewTask() connect.SourceTask                    { return nil }

type testConverter struct{}

func (testConverter) Configure(map[string]string, bool) error { return nil }
func (testConverter) FromConnectData(string, *connect.Headers, *connect.Schema, any) ([]byte, error) {
	return nil, nil
}
func (testConverter) ToConnectData(string, *connect.Headers, []byte) (*connect.Schema, any, error) {
	return nil, nil, nil
}

func init() {
	plugins.Register(plugins.Plugin{Class: "test.fjord.api.TestSourceConnector", Aliases: []string{"TestSource", "test-source"}, Kind: plugins.Source, Version: "9.9", New: func() any { return testSource{} }})
	plugins.Register(plugins.Plugin{Class: "test.fjord.api.TestConverter", Kind: plugins.Converter, New: func() any { return testConverter{} }})
}

func TestRegistryPlugins(t *testing.T) {
	base := connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "Globally unique name to use for this connector.", Group: "Common", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Connector name"}).
		Define(connect.ConfigKey{Name: "path", Type: connect.TypeInt, Default: int32(1), Importance: connect.Low})
	s := New(newFakeHerder(), Options{Plugins: RegistryPlugins{SourceBase: base}})
	expect(t, s, "GET", "/connector-plugins/TestSource/config", "", 200, `[`+
		`{"name":"path","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"Where to read <from> & how.","group":null,"order_in_group":-1,"width":"NONE","display_name":"path","dependents":[]},`+
		`{"name":"ratio","type":"DOUBLE","required":false,"default_value":"1.0","importance":"LOW","documentation":"A ratio.","group":"Tuning","order_in_group":2,"width":"SHORT","display_name":"Ratio","dependents":[]},`+
		`{"name":"topics.list","type":"LIST","required":false,"default_value":"a,b","importance":"MEDIUM","documentation":"","group":null,"order_in_group":-1,"width":"NONE","display_name":"topics.list","dependents":[]},`+
		`{"name":"secret","type":"PASSWORD","required":false,"default_value":"[hidden]","importance":"MEDIUM","documentation":"","group":null,"order_in_group":-1,"width":"NONE","display_name":"secret","dependents":[]},`+
		`{"name":"name","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"Globally unique name to use for this connector.","group":"Common","order_in_group":1,"width":"MEDIUM","display_name":"Connector name","dependents":[]}]`)
	expect(t, s, "GET", "/connector-plugins/test.fjord.api.TestConverter/config", "", 200, `[]`)
	expect(t, s, "GET", "/connector-plugins/NoSuch/config", "", 404, `{"error_code":404,"message":"Unknown plugin NoSuch."}`)

	// The listing: connectors only by default; Kafka's kind order.
	_, _, body := do(t, s, "GET", "/connector-plugins", "")
	if !strings.Contains(body, `{"class":"test.fjord.api.TestSourceConnector","type":"source","version":"9.9"}`) || strings.Contains(body, "TestConverter") {
		t.Errorf("connectors only: %s", body)
	}
	_, _, body = do(t, s, "GET", "/connector-plugins?connectorsOnly=false", "")
	if !strings.Contains(body, `{"class":"test.fjord.api.TestConverter","type":"converter","version":"`+plugins.DefaultVersion+`"}`) {
		t.Errorf("all plugins: %s", body)
	}
}

// TestValidateAcceptsAliases: the body's connector.class may name the
// path's plugin by another registered name.
func TestValidateAcceptsAliases(t *testing.T) {
	f := newFakeHerder()
	f.validate[canonical(map[string]string{"connector.class": "test-source"})] = &herder.ConfigInfos{Name: "test.fjord.api.TestSourceConnector"}
	s := New(f, Options{})
	expect(t, s, "PUT", "/connector-plugins/TestSource/config/validate", `{"connector.class":"test-source"}`, 200,
		`{"name":"test.fjord.api.TestSourceConnector","error_count":0,"groups":[],"configs":[]}`)
	expect(t, s, "PUT", "/connector-plugins/test.fjord.api.TestSourceConnector/config/validate", `{"connector.class":"FileStreamSink"}`, 400,
		`{"error_code":400,"message":"Included connector type FileStreamSink does not match request type test.fjord.api.TestSourceConnector"}`)
}

// pluginProvider is a herder that describes plugin configs itself.
type pluginProvider struct{ *fakeHerder }

func (pluginProvider) ConnectorPluginConfig(ctx context.Context, name string) ([]herder.ConfigKeyInfo, error) {
	return []herder.ConfigKeyInfo{{Name: "from-herder", Type: "STRING", Importance: "LOW", Width: "NONE", DisplayName: "from-herder", Order: -1}}, nil
}

func TestPluginConfigFromHerder(t *testing.T) {
	s := New(pluginProvider{newFakeHerder()}, Options{})
	expect(t, s, "GET", "/connector-plugins/anything/config", "", 200,
		`[{"name":"from-herder","type":"STRING","required":false,"default_value":null,"importance":"LOW","documentation":"","group":null,"order_in_group":-1,"width":"NONE","display_name":"from-herder","dependents":[]}]`)
}
