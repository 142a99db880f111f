package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api/admin"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestConsoleEndToEnd drives the web console of a real `fjord dev` in
// headless Chromium as a user would: creates a topic with the Topics
// form, produces a message from the Produce tab and reads it back in the
// Messages tab, creates a datagen connector with the new-connector form
// (its validation shown as it is filled in), sees it RUNNING and pauses
// it, then sees a sink's consumer lag on the group page and on the
// Pipelines page. A failure leaves a screenshot and the page's HTML in the
// artifacts dir.
func TestConsoleEndToEnd(t *testing.T) {
	testkit.SkipShort(t, "console browser test")
	chromium := chromiumPath(t) // before anything starts: a missing browser fails at once
	start := time.Now()
	dev := testkit.StartDevProcess(t, t.TempDir())
	dev.WaitServing(t, 60*time.Second, "")
	base := "http://" + dev.HTTPAddr
	waitConnectREST(t, base)
	b := newBrowser(t, chromium, base)

	const topic = "e2e-orders"
	// Each step builds on the one before: stop at the first failure, so
	// the saved screenshot shows the page that failed.
	steps := []struct {
		name string
		run  func(*browser)
	}{
		{"topic", func(b *browser) { consoleCreateTopic(b, topic) }},
		{"produce and browse", func(b *browser) { consoleProduceAndBrowse(b, topic) }},
		{"connector form", consoleCreateConnector},
		{"lag", func(b *browser) { consoleLag(b, dev, base, topic) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(b.with(t)) }) {
			return
		}
	}
	consoleUsedOnlyDocumentedAPIs(t, b.reqs.all())
	t.Logf("console end-to-end took %v", time.Since(start).Round(time.Millisecond))
}

// consoleUsedOnlyDocumentedAPIs checks the rule that the console does
// nothing a script cannot: every request its pages made during the test,
// other than its own files under /ui/, is an operation of the OpenAPI
// document the node serves.
func consoleUsedOnlyDocumentedAPIs(t *testing.T, requests []string) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(admin.OpenAPI(), &doc); err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	type op struct {
		method string
		path   *regexp.Regexp
	}
	var ops []op
	param := regexp.MustCompile(`\{[^}]+\}`)
	for p, methods := range doc.Paths {
		const slot = "\x00"
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(param.ReplaceAllString(p, slot)), slot, "[^/]+") + "$")
		for m := range methods {
			ops = append(ops, op{strings.ToUpper(m), re})
		}
	}
	apiCalls := 0
	for _, r := range requests {
		method, path, _ := strings.Cut(r, " ")
		if path == "/ui" || strings.HasPrefix(path, "/ui/") {
			continue
		}
		apiCalls++
		if !slices.ContainsFunc(ops, func(o op) bool { return o.method == method && o.path.MatchString(path) }) {
			t.Errorf("the console called %s, which the OpenAPI document does not describe", r)
		}
	}
	if apiCalls < 10 {
		t.Errorf("only %d API calls recorded from the console; is the request log working?", apiCalls)
	}
}

// with is the browser reporting to a subtest (which fails the parent).
func (b *browser) with(t *testing.T) *browser {
	c := *b
	c.t = t
	return &c
}

func consoleCreateTopic(b *browser, topic string) {
	b.open("#/topics")
	b.click("#topic-create-open")
	b.typeInto("#topic-create-name", topic)
	b.setValue("#topic-create-partitions", "1")
	b.setValue("#topic-create-rf", "1")
	b.click("#topic-create-submit")
	b.waitVisible(fmt.Sprintf(`tr[data-topic=%s]`, cssString(topic)))
}

func consoleProduceAndBrowse(b *browser, topic string) {
	b.click(fmt.Sprintf(`tr[data-topic=%s] a[href="#/topics/%s"]`, cssString(topic), topic))
	b.click("#tab-produce")
	b.typeInto("#produce-key", "order-1")
	b.typeInto("#produce-value", `{"item":"kayak","qty":2}`)
	b.click("#produce-submit")
	b.waitFor("the produce toast", `document.querySelector('#toast').textContent.includes('Produced to partition')`,
		`document.querySelector('#toast').textContent`)

	b.click("#tab-messages")
	b.setValue("#browse-from", "earliest")
	b.click("#browse-load")
	b.waitFor("the produced message in the Messages tab",
		`[...document.querySelectorAll('tr.message-row')].some(r =>
			r.querySelector('td.message-key').textContent.includes('order-1') &&
			r.querySelector('td.message-value').textContent.includes('kayak'))`,
		`[...document.querySelectorAll('tr.message-row')].map(r => r.textContent).join(' | ') || 'no message rows'`)
}

func consoleCreateConnector(b *browser) {
	const name, plugin = "e2e-datagen", "io.fjord.connect.datagen.DatagenConnector"
	b.open("#/connectors")
	b.click("#connector-new")
	b.waitFor("the datagen plugin in the plugin list",
		`[...document.querySelectorAll('#connector-plugin option')].some(o => o.value === `+jsString(plugin)+`)`,
		`[...document.querySelectorAll('#connector-plugin option')].map(o => o.value).join(', ')`)
	b.setValue("#connector-plugin", plugin)
	b.waitVisible(`[data-config="kafka.topic"]`)
	// Validation as you type: datagen needs a quickstart or a schema, and
	// the worker says so next to the field before anything is typed.
	b.waitFor("the quickstart error from the worker's validation",
		`document.querySelector('.field-error[data-error-for="quickstart"]').textContent.includes('Must set exactly one of')`,
		`document.querySelector('#connector-validation').textContent`)
	b.typeInto("#connector-name", name)
	b.typeInto(`[data-config="kafka.topic"]`, "e2e-gen")
	b.setValue(`[data-config="quickstart"]`, "orders")
	b.setValue(`[data-config="max.interval"]`, "100")
	b.waitFor("the worker accepting the config",
		`document.querySelector('#connector-error-count')?.dataset.count === '0'`,
		`document.querySelector('#connector-validation').textContent`)
	b.click("#connector-create")
	b.waitFor("the new connector's page", `location.hash === '#/connectors/`+name+`'`, `location.hash`)
	b.waitFor("the connector RUNNING", `document.querySelector('#connector-state')?.textContent === 'RUNNING'`,
		`document.querySelector('#connector-state')?.textContent + ' ' + document.querySelector('#connector-tasks').textContent`)
	b.waitFor("a RUNNING task", `[...document.querySelectorAll('tr.task-row .badge')].some(x => x.textContent === 'RUNNING')`,
		`document.querySelector('#connector-tasks').textContent`)
	b.click("#connector-pause")
	b.waitFor("the connector PAUSED", `document.querySelector('#connector-state')?.textContent === 'PAUSED'`,
		`document.querySelector('#connector-state')?.textContent`)

	b.open("#/connectors")
	b.waitFor("the connector in the list, paused",
		`document.querySelector('tr[data-connector="`+name+`"] .badge')?.textContent === 'PAUSED'`,
		`document.querySelector('#connectors-body').textContent`)
}

// consoleLag makes a sink that has read the topic's first records and
// stopped (Kafka's sink group connect-<name> then holds its committed
// offsets), writes more, and looks for the difference on the group page
// and on the Pipelines page.
func consoleLag(b *browser, dev *testkit.DevProcess, base, topic string) {
	t := b.t
	const sink = "e2e-sink"
	out := filepath.Join(t.TempDir(), "sink.txt")
	cl := testkit.Client(t, dev.KafkaAddr)
	ctx := testkit.Context(t, time.Minute)
	produce := func(n int, prefix string) {
		for i := range n {
			r := &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("%s-%d", prefix, i)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce to %s: %v", topic, err)
			}
		}
	}
	produce(4, "before") // with the console's message: 5 records
	connectREST(t, "POST", base+"/connectors", map[string]any{"name": sink, "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": topic, "file": out,
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
	}})
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		data, _ := os.ReadFile(out)
		if n := bytes.Count(data, []byte("\n")); n < 5 {
			return fmt.Errorf("the sink wrote %d of 5 lines to %s", n, out)
		}
		return nil
	})
	// Stop from the console: the sink commits what it wrote and leaves.
	b.open("#/connectors/" + sink)
	b.click("#connector-stop")
	b.waitFor("the sink STOPPED", `document.querySelector('#connector-state')?.textContent === 'STOPPED'`,
		`document.querySelector('#connector-state')?.textContent`)
	adm := testkit.Admin(t, dev.KafkaAddr)
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		offs, err := adm.FetchOffsets(ctx, "connect-"+sink)
		if err != nil {
			return err
		}
		if o, ok := offs.Lookup(topic, 0); !ok || o.At != 5 {
			return fmt.Errorf("group connect-%s has not committed offset 5 on %s-0 yet (%+v)", sink, topic, o)
		}
		return nil
	})
	produce(3, "after")

	b.open("#/groups/connect-" + sink)
	b.waitFor("the group's total lag of 3",
		`document.querySelector('#group-total-lag')?.textContent.replace(/[^0-9]/g, '') === '3'`,
		`document.querySelector('#group-total-lag')?.textContent`)

	b.open("#/pipelines")
	hop := `section.pipeline div.hop[data-kind="sink"][data-name="` + sink + `"]`
	b.waitFor("the sink's lag of 3 records on the Pipelines page",
		`document.querySelector('`+hop+` .hop-lag-records')?.dataset.value === '3'`,
		`document.querySelector('#pipelines-body').textContent`)
	b.waitFor("a lag in seconds on the sink hop",
		`document.querySelector('`+hop+` .hop-lag-seconds')?.dataset.value > 0`,
		`document.querySelector('`+hop+`')?.textContent`)
}

// waitConnectREST waits until the dev node's Connect worker answers its
// REST API (it joins its group after the broker serves).
func waitConnectREST(t *testing.T, base string) {
	t.Helper()
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		res, err := http.Get(base + "/connectors")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /connectors: %s", res.Status)
		}
		return nil
	})
}

// connectREST calls the Connect REST API and fails the test on an error status.
func connectREST(t *testing.T, method, url string, body any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %s %s", method, url, res.Status, strings.TrimSpace(string(msg)))
	}
}
