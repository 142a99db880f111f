package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/fjordhq/fjord/api/httpsec"
	"github.com/fjordhq/fjord/connect/runtime"
)

// restListeners are a worker's bound REST listeners: every entry of
// listeners, as Kafka's RestServer serves them all (an http listener
// beside an https one is how users move to HTTPS), each with its
// scheme's security (HTTPS settings, authentication and roles).
type restListeners struct {
	bound   []boundREST
	servers []*http.Server
}

type boundREST struct {
	scheme string
	ln     net.Listener // TLS-wrapped for https
	sec    *httpsec.Security
}

// bindRESTListeners binds a worker's listeners (default http://:8083)
// before the worker starts, so a port-0 listener advertises its real
// port. advertisedAddr is the bound address of the listener the worker
// advertises: the first of rest.advertised.listener's scheme, else the
// first.
func bindRESTListeners(wc *runtime.WorkerConfig, log *slog.Logger) (_ *restListeners, advertisedAddr string, err error) {
	listeners := wc.Listeners
	if len(listeners) == 0 {
		listeners = []string{"http://:8083"}
	}
	rl := &restListeners{}
	defer func() {
		if err != nil {
			rl.closeListeners()
		}
	}()
	for _, l := range listeners {
		scheme, addr, err := runtime.ParseListener(l)
		if err != nil {
			return nil, "", err
		}
		sec, err := httpsec.ForListener(wc.Config.Originals(), scheme, log)
		if err != nil {
			return nil, "", err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, "", fmt.Errorf("REST listener %s: %w (is another worker running? set listeners)", l, err)
		}
		rl.bound = append(rl.bound, boundREST{scheme: scheme, ln: sec.Listen(ln), sec: sec})
		if advertisedAddr == "" && (wc.RestAdvertisedListener == "" || wc.RestAdvertisedListener == scheme) {
			advertisedAddr = ln.Addr().String()
		}
	}
	if advertisedAddr == "" {
		advertisedAddr = rl.bound[0].ln.Addr().String()
	}
	return rl, advertisedAddr, nil
}

// serve serves h on every listener; a listener that fails reports on errc.
func (rl *restListeners) serve(h http.Handler, errc chan<- error) {
	for _, b := range rl.bound {
		srv := &http.Server{Handler: b.sec.Handler(h), ReadHeaderTimeout: 30 * time.Second}
		rl.servers = append(rl.servers, srv)
		go func() {
			if err := srv.Serve(b.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				select {
				case errc <- fmt.Errorf("REST listener %s://%s: %w", b.scheme, b.ln.Addr(), err):
				default:
				}
			}
		}()
	}
}

// shutdown stops the servers (in-flight requests finish until ctx ends)
// and closes listeners never served.
func (rl *restListeners) shutdown(ctx context.Context) {
	if rl == nil {
		return
	}
	for _, srv := range rl.servers {
		srv.Shutdown(ctx)
	}
	rl.closeListeners()
}

func (rl *restListeners) closeListeners() {
	for _, b := range rl.bound {
		b.ln.Close()
	}
}
