package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/fjordhq/fjord/internal/testkit"
)

// browserStepTimeout bounds every wait of a browser test: a page that
// does not show what is expected fails the test within this time.
const browserStepTimeout = 30 * time.Second

// chromiumPath finds the browser the console tests drive: $FJORD_CHROMIUM,
// else chromium (or chromium-browser, google-chrome) on the PATH. A
// missing browser fails the test, in CI and outside it: the console is
// part of the product and `make test` expects the browser installed.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FJORD_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("FJORD_CHROMIUM=%s: %v", p, err)
		}
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found for the console browser test: install it (apt-get install chromium) or set FJORD_CHROMIUM to its path")
	return ""
}

// browser is one headless Chromium tab on a Fjord node's console.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // http://host:port
	reqs *requestLog
}

// requestLog records the HTTP requests the console's pages make.
type requestLog struct {
	mu   sync.Mutex
	seen []string // "METHOD /path"
}

func (l *requestLog) add(method, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return // data: URLs (the favicon) are no requests to the node
	}
	l.mu.Lock()
	l.seen = append(l.seen, method+" "+u.EscapedPath())
	l.mu.Unlock()
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// newBrowser starts headless Chromium (1366×900, found by chromiumPath)
// and opens base+/ui/.
// When the test fails, a full-page screenshot and the page's HTML are
// saved to the artifacts dir (see artifactsDir) and their paths logged.
func newBrowser(t *testing.T, chromium, base string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1366, 900),
		chromedp.Flag("disable-dev-shm-usage", true), // small /dev/shm in containers
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base, reqs: &requestLog{}}
	// Every request the pages make is recorded (Listen's callback must
	// return fast: it only appends under a lock).
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.reqs.add(e.Request.Method, e.Request.URL)
		}
	}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	// The first Run starts the browser; its context must not time out
	// (that would stop the browser), so the navigation is bounded by a
	// watchdog instead.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx, chromedp.Navigate(base+"/ui/")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("open the console in Chromium: %v", err)
		}
	case <-time.After(browserStepTimeout):
		t.Fatalf("Chromium did not open %s/ui/ within %v", base, browserStepTimeout)
	}
	t.Cleanup(b.saveArtifactsOnFailure)
	return b
}

// step runs actions with the step timeout, failing the test with what.
func (b *browser) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v (page %s)", what, err, b.location())
	}
}

// open shows a console page by its fragment ("#/topics"), as a click on a
// link does (no reload).
func (b *browser) open(fragment string) {
	b.t.Helper()
	b.eval("open "+fragment, fmt.Sprintf("location.hash = %s", jsString(fragment)))
}

func (b *browser) eval(what, js string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](js)); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) waitVisible(css string) {
	b.t.Helper()
	b.step("wait for "+css+" to show", chromedp.WaitVisible(chromedp.CSS(css)))
}

func (b *browser) click(css string) {
	b.t.Helper()
	b.step("click "+css, chromedp.WaitVisible(chromedp.CSS(css)), chromedp.Click(chromedp.CSS(css)))
}

// typeInto types text into an input or textarea as a user would.
func (b *browser) typeInto(css, text string) {
	b.t.Helper()
	b.step("type into "+css, chromedp.WaitVisible(chromedp.CSS(css)), chromedp.SendKeys(chromedp.CSS(css), text))
}

// setValue sets a field's value (a select's option, a prefilled input)
// and fires its input and change events.
func (b *browser) setValue(css, value string) {
	b.t.Helper()
	b.step("set "+css, chromedp.WaitVisible(chromedp.CSS(css)), chromedp.SetValue(chromedp.CSS(css), value))
}

// waitFor polls a JavaScript expression until it is truthy; on timeout
// the test fails with what and the expression's last non-truthy value
// (from describe, a JavaScript expression giving what the page shows).
func (b *browser) waitFor(what, cond, describe string) {
	b.t.Helper()
	deadline := time.Now().Add(browserStepTimeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			shown := b.text(describe)
			b.t.Fatalf("%s: not seen within %v (page %s shows %q; last error %v)", what, browserStepTimeout, b.location(), shown, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// text evaluates a JavaScript expression to a string ("" on error).
func (b *browser) text(js string) string {
	if js == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string]("String("+js+")"))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return s
}

func (b *browser) location() string { return b.text("location.hash") }

// artifactsDir is $FJORD_TEST_ARTIFACTS, else <repo>/test-artifacts.
func artifactsDir(t *testing.T) string {
	if d := os.Getenv("FJORD_TEST_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(testkit.RepoRoot(t), "test-artifacts")
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// saveArtifactsOnFailure keeps a full-page screenshot and the HTML of the
// page as the test failed, for the CI log to point at.
func (b *browser) saveArtifactsOnFailure() {
	if !b.t.Failed() {
		return
	}
	dir := artifactsDir(b.t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Logf("cannot create the artifacts dir %s: %v", dir, err)
		return
	}
	stem := filepath.Join(dir, unsafeName.ReplaceAllString(b.t.Name(), "_")+"-"+time.Now().Format("20060102-150405"))
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		b.t.Logf("screenshot failed: %v", err)
	} else if err := os.WriteFile(stem+".png", png, 0o644); err != nil {
		b.t.Logf("save screenshot: %v", err)
	} else {
		b.t.Logf("screenshot of the failed page: %s.png", stem)
	}
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err != nil {
		b.t.Logf("reading the page's HTML failed: %v", err)
	} else if err := os.WriteFile(stem+".html", []byte(html), 0o644); err != nil {
		b.t.Logf("save HTML: %v", err)
	} else {
		b.t.Logf("HTML of the failed page: %s.html", stem)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// cssString quotes s for a CSS attribute selector ([data-topic="..."]).
func cssString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
